package clip

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/internal/rng"
)

// The empirical covariance of Gaussian.Add matches the requested per-block
// variances: each coordinate's variance within 4 standard errors, and
// cross-covariances (within and across blocks) within 4 standard errors of 0.
func TestNoiseCovariance(t *testing.T) {
	sizes := []int{3, 4, 2}
	vars := []float64{0.5, 2, 0.01}
	g, err := NewBlockGaussian(sizes, vars)
	if err != nil {
		t.Fatal(err)
	}
	const n = 40000
	dim := g.Len()
	want := make([]float64, 0, dim)
	for j, sz := range sizes {
		for k := 0; k < sz; k++ {
			want = append(want, vars[j])
		}
	}
	s := rng.NewSeeded(11)
	sum := make([]float64, dim)
	cov := make([]float64, dim*dim)
	v := make([]float32, dim)
	for it := 0; it < n; it++ {
		clear(v)
		g.Add(v, s)
		for a := 0; a < dim; a++ {
			sum[a] += float64(v[a])
			for b := 0; b < dim; b++ {
				cov[a*dim+b] += float64(v[a]) * float64(v[b])
			}
		}
	}
	worst := 0.0
	for a := 0; a < dim; a++ {
		for b := 0; b < dim; b++ {
			c := cov[a*dim+b]/n - sum[a]*sum[b]/(n*n)
			var exp, se float64
			if a == b {
				exp, se = want[a], want[a]*math.Sqrt(2.0/n)
			} else {
				se = math.Sqrt(want[a] * want[b] / n)
			}
			z := (c - exp) / se
			worst = math.Max(worst, math.Abs(z))
			if math.Abs(z) > 4 {
				t.Errorf("cov[%d][%d] = %.5g, want %.5g (z = %.2f)", a, b, c, exp, z)
			}
		}
	}
	t.Logf("largest |z| over %d covariance entries: %.2f", dim*dim, worst)
	if tv := g.TotalVariance(); math.Abs(tv-(3*0.5+4*2+2*0.01)) > 1e-12 {
		t.Errorf("TotalVariance = %v", tv)
	}
}

func TestIsotropicFor(t *testing.T) {
	h, _ := NewL2LInf(2, 4, 9) // L2 sensitivity min(2, 3·1) = 2
	g, err := IsotropicFor(h, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	if std := g.Std(); len(std) != 1 || math.Abs(std[0]-3) > 1e-12 || g.Len() != 9 {
		t.Errorf("isotropic std %v over %d, want [3] over 9", std, g.Len())
	}
}

// Theorem 4.6 against the paper's Section 6 example and its own identities.
func TestHybridNoiseStd(t *testing.T) {
	// d = 291,898; r1 = 1000 with c = 2.5; residual 290,898 with c = 1.
	// Isotropic / optimal variance = d·Σc²/(Σ c_j√r_j)² = 5.5338 (spec §4.4).
	c2 := []float64{2.5, 1}
	r := []int{1000, 290898}
	const b0 = 0.8
	std, err := HybridNoiseStd(c2, r, b0)
	if err != nil {
		t.Fatal(err)
	}
	var opt, inv float64
	for j := range c2 {
		opt += float64(r[j]) * std[j] * std[j]
		inv += c2[j] * c2[j] / (std[j] * std[j])
	}
	iso := 291898 * b0 * b0 * (2.5*2.5 + 1) // σ0 = b0·max‖s‖, max‖s‖² = Σc²
	ratio := iso / opt
	t.Logf("isotropic/optimal variance ratio %.4f (paper: 5.5×, spec: 5.5338)", ratio)
	if math.Abs(ratio-5.5338) > 5e-4 {
		t.Errorf("ratio %.5f, want 5.5338", ratio)
	}
	// Same RDP as isotropic noise at b0: Σ c_j²/σ_j² = 1/b0².
	if math.Abs(inv-1/(b0*b0)) > 1e-12 {
		t.Errorf("Σ c²/σ² = %v, want 1/b0² = %v", inv, 1/(b0*b0))
	}
	// Optimality: any other allocation with the same Σ c²/σ² costs more.
	s := rng.NewSeeded(3)
	for it := 0; it < 200; it++ {
		p := []float64{std[0] * math.Exp(s.NormFloat64()*0.3), std[1] * math.Exp(s.NormFloat64()*0.3)}
		var pinv, pt float64
		for j := range p {
			pinv += c2[j] * c2[j] / (p[j] * p[j])
		}
		k := math.Sqrt(pinv * b0 * b0) // rescale to the same RDP
		for j := range p {
			p[j] *= k
			pt += float64(r[j]) * p[j] * p[j]
		}
		if pt < opt*(1-1e-12) {
			t.Fatalf("allocation %v beats Theorem 4.6: %v < %v", p, pt, opt)
		}
	}
}
