package preprocess

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/internal/zigattack"
	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/rng"
)

// The floating-point attack of issue 37 (HIGH 2, internal/zigattack) on
// every noisy value the package releases. The attacker knows every record
// but one and asks, for each candidate true value (the sum with the record,
// the sum without it; or every count near the release), whether the
// released float can come from it by a NormFloat64 draw. Before the fix the
// release singles out the truth (shown on the old formula, copied here);
// after it, every release lies on a public lattice, so the exact sampler
// (whose integer noise reaches every lattice point) leaves both candidates
// possible, and the float attack finds neither, or for a count only "the
// noise was 0" (the release itself).

// sumAttack checks one released coordinate y of a noisy sum: old is the
// old formula's release of the same coordinate, cands the true values with
// and without the last record (cands[0] the truth), rel(c, x) the old
// formula and approx(y, c) its inverse; onLattice reports whether the new
// y is γ times an integer (after the release's public post-processing).
func sumAttack(t *testing.T, what string, y, old float64, cands []float64, rel func(c, x float64) float64, approx func(y, c float64) float64, onLattice bool) (recovered bool) {
	t.Helper()
	got := zigattack.Candidates(old, cands, rel, func(c float64) float64 { return approx(old, c) })
	recovered = len(got) == 1 && got[0] == cands[0]
	if !onLattice {
		t.Fatalf("%s: release %v is not on the public lattice", what, y)
	}
	if got := zigattack.Candidates(y, cands, rel, func(c float64) float64 { return approx(y, c) }); len(got) == 1 {
		t.Fatalf("%s: the float attack singles out %v from the exact release %v", what, got[0], y)
	}
	return recovered
}

// onGrid reports whether y·scale/γ is an integer up to the rounding of the
// post-processing (division by n): the nearest lattice point maps back to y.
func onGrid(y, scale, gamma float64) bool {
	m := math.Round(y * scale / gamma)
	return m*gamma/scale == y
}

func TestStandardizeResistsFloatAttack(t *testing.T) {
	const n, d, releases = 40, 3, 40
	b := FeatureBounds{Lo: []float64{0, -5, 10}, Hi: []float64{1, 5, 30}}
	delta := StandardizeSensitivity(d)
	gamma := math.Ldexp(delta, -lattice.SumExponent(n))
	data := rng.New(1)
	recovered, total := 0, 0
	for r := range releases {
		x := make([]float32, n*d)
		for i := range x {
			j := i % d
			x[i] = float32(b.Lo[j] + (b.Hi[j]-b.Lo[j])*data.Float64())
		}
		const sigma = 1.3
		st, _, err := BoundedStandardizer{Bounds: b, Sigma: sigma}.Fit(x, n, d, rng.New(uint64(100+r)))
		if err != nil {
			t.Fatal(err)
		}
		// The old release: float sums of v and v², plus std·NormFloat64().
		sums := func(m int) []float64 {
			s := make([]float64, 2*d)
			for i := range m {
				for j := range d {
					v := (min(max(float64(x[i*d+j]), b.Lo[j]), b.Hi[j])-b.Lo[j])/(b.Hi[j]-b.Lo[j]) - 0.5
					s[j] += v
					s[d+j] += v * v
				}
			}
			return s
		}
		with, without := sums(n), sums(n-1)
		std := sigma * delta
		old := rng.New(uint64(200 + r))
		for k := range 2 * d {
			y := st.Released[k]
			oldY := with[k] + std*old.NormFloat64()
			if sumAttack(t, "standardisation", y, oldY, []float64{with[k], without[k]},
				func(c, x float64) float64 { return c + std*x }, func(y, c float64) float64 { return (y - c) / std },
				onGrid(y, 1, gamma)) {
				recovered++
			}
			total++
		}
	}
	t.Logf("old release: the record's presence recovered at %d of %d released sums", recovered, total)
	if recovered < total*95/100 {
		t.Fatalf("the attack recovered the old release at %d of %d sums; it has lost its teeth", recovered, total)
	}
}

// The practical variant's mean; the theory variant's (AdaptiveMean) sum goes
// through the same latticeMean.
func TestDPSGDFMeanResistsFloatAttack(t *testing.T) {
	const n, d, releases, cf = 50, 4, 50, 1.0
	gm := GaussianMean{EpsF: 0.5, Delta: 1e-5, CF: cf}
	sigma, err := gm.Sigma()
	if err != nil {
		t.Fatal(err)
	}
	gamma := math.Ldexp(cf, -lattice.SumExponent(n))
	data := rng.New(2)
	recovered, total := 0, 0
	for r := range releases {
		X := (&ProjectBall{Radius: cf}).Transform(randomMatrix(data, n, d, 2))
		mu, _, err := gm.Estimate(X, rng.New(uint64(300+r)))
		if err != nil {
			t.Fatal(err)
		}
		sums := func(m int) []float64 {
			s := make([]float64, d)
			for i := range m {
				for j, v := range X.RawRowView(i) {
					s[j] += v
				}
			}
			return s
		}
		with, without := sums(n), sums(n-1)
		old := rng.New(uint64(400 + r))
		for j := range d {
			oldY := (with[j] + sigma*cf*old.NormFloat64()) / n // the release before the fix
			if sumAttack(t, "DPSGD-F mean", mu[j], oldY, []float64{with[j], without[j]},
				func(c, x float64) float64 { return (c + sigma*cf*x) / n }, func(y, c float64) float64 { return (y*n - c) / (sigma * cf) },
				onGrid(mu[j], n, gamma)) {
				recovered++
			}
			total++
		}
	}
	t.Logf("old release: the record's presence recovered at %d of %d released means", recovered, total)
	if recovered < total*95/100 {
		t.Fatalf("the attack recovered the old release at %d of %d means; it has lost its teeth", recovered, total)
	}
}

// The noisy counts of DPSGD-F's binary searches (AdaptiveMean, PrivQuantile)
// are compared with thresholds; their values are the release.
func TestDPSGDFCountsResistFloatAttack(t *testing.T) {
	const sigma, releases = 4.2, 200
	counts, err := newNoisyCounts(sigma, rng.New(5))
	if err != nil {
		t.Fatal(err)
	}
	old := rng.New(6)
	truth := rng.New(7)
	recovered := 0
	for range releases {
		c := float64(truth.IntN(1000))
		y := counts.release(int(c))
		oldY := c + sigma*old.NormFloat64() // the release before the fix
		var cands []float64
		for k := math.Ceil(oldY - 12*sigma); k <= oldY+12*sigma; k++ {
			cands = append(cands, k)
		}
		rel := func(c, x float64) float64 { return c + sigma*x }
		if got := zigattack.Candidates(oldY, cands, rel, func(c float64) float64 { return (oldY - c) / sigma }); len(got) == 1 && got[0] == c {
			recovered++
		}
		cands = cands[:0]
		for k := math.Ceil(y - 12*sigma); k <= y+12*sigma; k++ {
			cands = append(cands, k)
		}
		if y != math.Trunc(y) {
			t.Fatalf("count %v is not an integer", y)
		}
		for _, g := range zigattack.Candidates(y, cands, rel, func(c float64) float64 { return (y - c) / sigma }) {
			if g != y {
				t.Fatalf("release %v: the float attack singles out %v", y, g)
			}
		}
	}
	if counts.err != nil {
		t.Fatal(counts.err)
	}
	t.Logf("old release: count recovered alone at %d of %d", recovered, releases)
	if recovered < releases*95/100 {
		t.Fatalf("the attack recovered the old count at %d of %d; it has lost its teeth", recovered, releases)
	}
}
