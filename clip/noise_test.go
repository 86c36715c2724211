package clip

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/rng"
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
	s := rng.New(11)
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

// Per-block noise from the accountant's Theorem 4.6 allocation, laid out on
// a Subspace clipper's blocks: the accountant sees the clipper's blocks
// (r_j, c2_j, d0_j) with the residual as r_m = d, and the noise covers the
// released coordinates with the requested per-block variances.
func TestBlockNoiseForSubspace(t *testing.T) {
	const d = 2000
	sub, err := NewSubspace(spreadBasis(d, []int{100, 50}), []float64{2.5, 1.5, 1}, []float64{0, 4, 100})
	if err != nil {
		t.Fatal(err)
	}
	var blocks []accountant.Block
	for _, b := range sub.Sensitivity().Blocks {
		blocks = append(blocks, accountant.Block{Dim: b.Dim, C2: b.C2, D0: b.D0, Sigma: 1})
	}
	want := []accountant.Block{{Dim: 100, C2: 2.5, D0: 1, Sigma: 1}, {Dim: 50, C2: 1.5, D0: 4, Sigma: 1}, {Dim: d, C2: 1, D0: 100, Sigma: 1}}
	for j := range want {
		if b := blocks[j]; b.Dim != want[j].Dim || b.C2 != want[j].C2 || math.Abs(b.D0-want[j].D0) > 1e-12 || b.Sigma != 1 {
			t.Errorf("block %d: %+v, want %+v", j, b, want[j])
		}
	}
	const b0 = 0.8
	std, err := accountant.OptimalNoise(blocks, b0)
	if err != nil {
		t.Fatal(err)
	}
	vars := make([]float64, len(std))
	for j, s := range std {
		vars[j] = s * s
	}
	g, err := BlockNoiseFor(sub, vars)
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != sub.OutDim() || g.Len() != 150+d {
		t.Fatalf("noise over %d coordinates, released vector has %d", g.Len(), sub.OutDim())
	}
	got := g.Std()
	var inv float64
	for j := range std {
		if math.Abs(got[j]-std[j]) > 1e-15 {
			t.Errorf("block %d std %v, want %v", j, got[j], std[j])
		}
		inv += want[j].C2 * want[j].C2 / vars[j]
	}
	// Theorem 4.6 keeps the RDP of a Gaussian with multiplier b0.
	if math.Abs(inv-1/(b0*b0)) > 1e-12 {
		t.Errorf("Σ c²/σ² = %v, want 1/b0² = %v", inv, 1/(b0*b0))
	}
	if _, err := BlockNoiseFor(sub, vars[:2]); err == nil {
		t.Error("too few variances accepted")
	}
}
