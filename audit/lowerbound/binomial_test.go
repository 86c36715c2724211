package lowerbound

import (
	"context"
	"errors"
	"math"
	"testing"
)

// lgammaLogPMF is log P[Bin(r, q) = k] from lgamma, accurate while
// lgamma(r+1) keeps its digits (r up to about 1e7).
func lgammaLogPMF(r, k int, eps float64) float64 {
	lr, _ := math.Lgamma(float64(r + 1))
	lk, _ := math.Lgamma(float64(k + 1))
	lrk, _ := math.Lgamma(float64(r - k + 1))
	return lr - lk - lrk - float64(k)*math.Log1p(math.Exp(-eps)) - float64(r-k)*math.Log1p(math.Exp(eps))
}

// exactPValue sums every term, one by one (the formula as written).
func exactPValue(eps, delta float64, m, r, v int) float64 {
	beta := 0.0
	for k := v; k <= r; k++ {
		beta += math.Exp(lgammaLogPMF(r, k, eps))
	}
	alpha, s := 0.0, 0.0
	for i := 1; i <= v; i++ {
		s += math.Exp(lgammaLogPMF(r, v-i, eps))
		alpha = math.Max(alpha, s/float64(i))
	}
	return math.Min(1, beta+2*float64(m)*delta*alpha)
}

// Loader's form against lgamma where lgamma is accurate, and against the
// closed forms at k = 0 and k = r.
func TestLogPMFAgainstLgamma(t *testing.T) {
	for _, tc := range []struct {
		r   int
		eps float64
	}{{1, 0}, {20, 0.3}, {1000, 2}, {123457, -1}, {3_000_000, 0.01}} {
		b := newBinomial(tc.r, tc.eps)
		for _, k := range []int{0, 1, tc.r / 3, tc.r / 2, tc.r - 1, tc.r} {
			got, want := b.logPMF(k), lgammaLogPMF(tc.r, k, tc.eps)
			if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("r=%d ε=%v k=%d: log p = %.15g, lgamma %.15g", tc.r, tc.eps, k, got, want)
			}
		}
	}
}

// Beyond exactTerms the sums are bounded in blocks: the p-value must never
// fall below the term-by-term sum (the bound would no longer be valid) and
// must stay close to it.
func TestBlockedPValueBoundsTheExactSum(t *testing.T) {
	for _, tc := range []struct {
		eps, delta float64
		m, r, v    int
	}{
		{0, 1e-5, 1_000_000, 1_000_000, 1_000_000},
		{5, 1e-5, 1_000_000, 1_000_000, 1_000_000},
		{0.4, 1e-6, 400_000, 400_000, 240_000},
		{0.3, 1e-6, 400_000, 400_000, 230_000},
		{1, 1e-7, 300_000, 200_000, 150_000},
	} {
		got := OneRunPValue(tc.eps, tc.delta, tc.m, tc.r, tc.v)
		want := exactPValue(tc.eps, tc.delta, tc.m, tc.r, tc.v)
		if got < want*(1-1e-9) || got > want*1.01+1e-300 {
			t.Errorf("%+v: p = %.10g, term by term %.10g", tc, got, want)
		}
	}
}

// Counts far beyond any term-by-term sum (the fault pass's 1e15 ran for
// minutes) finish, and agree with the large-count limit: with v well above
// the mode by L = v − rq ≫ sd, α ≈ 1/L and β is negligible, so the test
// rejects where 2mδ/(v − rq) = p, i.e. ε = logit((v − 2mδ/p)/r), up to a
// relative O(sd/L) (about 1e-5 here; the tolerance is 1e-4).
func TestOneRunEpsilonHugeCounts(t *testing.T) {
	for _, tc := range []struct {
		m, r, v int
		delta   float64
	}{
		{1e15, 1e15, 1e15, 1e-5},
		{1e15, 1e15, 6e14, 1e-5},
		{1e12, 1e12, 9e11, 1e-4},
	} {
		q := (float64(tc.v) - 2*float64(tc.m)*tc.delta/0.05) / float64(tc.r)
		want := math.Log(q / (1 - q))
		got, err := OneRunEpsilon(tc.m, tc.r, tc.v, tc.delta, 0.95)
		if err != nil || math.Abs(got-want) > 1e-4*want {
			t.Errorf("%+v: ε = %.9f (%v), large-count limit %.9f", tc, got, err, want)
		}
	}
}

// An interrupt stops the computation with the context's error.
func TestOneRunEpsilonHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := OneRunEpsilonContext(ctx, 1e15, 1e15, 1e15, 1e-5, 0.95); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
}
