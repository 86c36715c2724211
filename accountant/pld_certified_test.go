package accountant

import (
	"math"
	"testing"
)

// TestPLDCertifiedReference checks the PLD at issue 38's points against the
// true ε of the continuous mechanism, computed without a grid or an FFT by
// accountant/testdata/pld_laplace_reference.py (a Laplace inversion
// integral at the saddle point; its output is pld_laplace_reference.out,
// accurate to about 1e-9 relative; at q = 1 it agrees with the exact
// Gaussian formula, 741.03871585648158 by mpmath, to 1e-15). Ours must
// never be below it (first), and within +0.5% of it. The slow points take
// up to a minute each on a loaded machine (q = 1e-4, T = 1e6: a grid of
// 6.25e-6 over losses up to 5).
func TestPLDCertifiedReference(t *testing.T) {
	for _, tc := range []struct {
		q, sigma float64
		steps    int
		delta    float64
		ref      float64
		band     float64 // allowed excess over ref (relative)
		slow     bool
	}{
		{0.01, 1, 1000, 1e-12, 3.9142981560374728, 5e-3, false},
		{0.01, 1, 1000, 1e-14, 4.543701988593065, 5e-3, false},
		{0.01, 1, 1000, 1e-16, 5.161800648571692, 5e-3, false},
		{0.1, 2, 10000, 1e-12, 51.25279855706146, 5e-3, false},
		{0.1, 2, 10000, 1e-13, 52.99448709848233, 5e-3, true},
		{0.1, 2, 10000, 1e-14, 54.66924010967492, 5e-3, true},
		{0.1, 2, 10000, 1e-15, 56.28439657614697, 5e-3, true},
		{0.1, 2, 10000, 1e-16, 57.846052084290264, 5e-3, false},
		{1, 1, 1000, 1e-14, 741.0387158564819, 5e-3, true},
		{0.01, 1, 1000, 1e-3, 1.1625123198621579, 5e-3, false},
		{0.1, 1, 100, 1e-6, 8.058608163269259, 5e-3, false},
		{0.5, 1, 10, 1e-5, 10.459927347122449, 5e-3, false},
		{1e-4, 1, 1000000, 1e-9, 0.7137001528909264, 5e-3, true},
		{1e-4, 1, 1000000, 1e-10, 0.7656950187376664, 5e-3, true},
		{1e-4, 1, 1000000, 1e-11, 0.8147063137239294, 5e-3, true},
		{1e-4, 1, 1000000, 1e-12, 0.8611898401569824, 5e-3, true},
	} {
		if tc.slow && testing.Short() {
			continue
		}
		b, err := PLDPoissonEpsilon(tc.q, tc.sigma, tc.steps, tc.delta)
		if err != nil {
			t.Errorf("q = %g, σ = %g, T = %d, δ = %g: %v", tc.q, tc.sigma, tc.steps, tc.delta, err)
			continue
		}
		rel := b.Epsilon/tc.ref - 1
		t.Logf("q = %g, σ = %g, T = %d, δ = %g: ε = %.10g, reference %.10g (%+.5f%%)", tc.q, tc.sigma, tc.steps, tc.delta, b.Epsilon, tc.ref, 100*rel)
		if rel < -1e-8 {
			t.Errorf("q = %g, σ = %g, T = %d, δ = %g: ε = %.10g below the true %.10g", tc.q, tc.sigma, tc.steps, tc.delta, b.Epsilon, tc.ref)
		} else if rel > tc.band {
			t.Errorf("q = %g, σ = %g, T = %d, δ = %g: ε = %.10g, %+.3f%% above the true %.10g (band %+.1f%%)", tc.q, tc.sigma, tc.steps, tc.delta, b.Epsilon, 100*rel, tc.ref, 100*tc.band)
		}
	}
}

// TestPLDSingleStepExact: at T = 1 the truth is the hockey-stick curve of
// one step in closed form (gaussianDirection.delta, normal tails only; the
// discretisation integrates densities instead), solved for ε by bisection.
func TestPLDSingleStepExact(t *testing.T) {
	for _, tc := range []struct{ q, sigma, delta float64 }{
		{0.01, 1, 1e-5}, {0.1, 0.8, 1e-3}, {0.5, 2, 1e-8}, {1, 1, 1e-12}, {0.02, 0.5, 1e-16},
	} {
		want := 0.0
		for _, remove := range []bool{true, false} {
			g := gaussianDirection{q: tc.q, sigma: tc.sigma, remove: remove}
			lo, hi := 0.0, 100.0
			if g.delta(0) <= tc.delta {
				continue
			}
			for range 200 {
				mid := (lo + hi) / 2
				if g.delta(mid) > tc.delta {
					lo = mid
				} else {
					hi = mid
				}
			}
			want = math.Max(want, hi)
		}
		b, err := PLDPoissonEpsilon(tc.q, tc.sigma, 1, tc.delta)
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		rel := b.Epsilon/want - 1
		t.Logf("%+v: ε = %.10g, exact %.10g (%+.5f%%)", tc, b.Epsilon, want, 100*rel)
		if rel < -1e-9 || rel > 5e-3 {
			t.Errorf("%+v: ε = %.10g against the exact %.10g (%+.4f%%): want within [0, +0.5%%]", tc, b.Epsilon, want, 100*rel)
		}
	}
}

// delta is the exact hockey-stick divergence (the test truth at T = 1) δ(ε) = P(L > ε) − e^ε Q(L > ε).
// The privacy loss L(x) = log P(x)/Q(x) is decreasing in x in both
// directions, so {L > ε} = {x < x_ε}. Products of e^ε and a Gaussian tail
// are formed in logs: both under- and overflow at large ε.
func (g gaussianDirection) delta(eps float64) float64 {
	q, s := g.q, g.sigma
	if g.remove {
		// L(x) = log(1 − q + q·exp((−2x−1)/(2σ²))) > log(1−q).
		if q < 1 && eps <= math.Log1p(-q) {
			return -math.Expm1(eps)
		}
		le := logExpm1Plus(eps, q)
		x := -s*s*(le-math.Log(q)) - 0.5
		return math.Max(0, q*normCDF((x+1)/s)-math.Exp(le+logNormCDF(x/s)))
	}
	// add: L(x) = −log(1 − q + q·exp((2x−1)/(2σ²))) < −log(1−q).
	if q < 1 && eps >= -math.Log1p(-q) {
		return 0
	}
	x := s*s*(math.Log(math.Expm1(-eps)+q)-math.Log(q)) + 0.5
	lq := math.Log(q) + logNormCDF((x-1)/s)
	if q < 1 {
		lq = logAdd(math.Log1p(-q)+logNormCDF(x/s), lq)
	}
	return math.Max(0, normCDF(x/s)-math.Exp(eps+lq))
}

// logNormCDF is log Φ(z), accurate where Φ(z) underflows.
func logNormCDF(z float64) float64 {
	if z > -30 {
		return math.Log(normCDF(z))
	}
	return logErfc(-z/math.Sqrt2) - math.Ln2
}
