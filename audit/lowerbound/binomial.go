package lowerbound

import (
	"context"
	"math"
)

// The one-run p-value sums binomial probabilities over ranges as long as
// the counts. Summing term by term costs time proportional to the counts
// (a count of 1e15 ran for minutes); instead each sum is exact for its
// first exactTerms terms and then walks in blocks that grow by 1/blockGrowth
// of the terms already covered, so a sum over n terms costs at most
// exactTerms + blockGrowth·ln(n/exactTerms) evaluations (about 90 000 for
// n = 1e15). A block is bounded from above, never estimated: the binomial
// probabilities are log-concave in k, so the ratio of neighbouring terms
// only shrinks along a walk in either direction, and a block of n terms
// from k is at most p(k)·(1 + ρ + … + ρ^(n−1)) with ρ the ratio at k.
// Every p-value is therefore at least the exact one, and a bound on ε built
// on it stays a valid lower bound (docs/audit.md).
const (
	exactTerms  = 1 << 16
	blockGrowth = 1 << 10
	// negligible is how far (in log) below a running sum a bound on all the
	// remaining terms must be before a walk adds it and stops: e^−50 is far
	// below float64's resolution of the sum.
	negligible = 50
	// checkEvery is how many blocks a walk covers between checks of its
	// context.
	checkEvery = 1 << 12
)

// binomial is Bin(r, p) with p = e^ε/(1+e^ε), the law of the number of
// correct guesses under the (ε, 0)-DP hypothesis.
type binomial struct {
	r    int
	eps  float64 // log(p/(1−p))
	p, q float64 // p and 1−p, each computed without cancellation
}

func newBinomial(r int, eps float64) binomial {
	return binomial{r: r, eps: eps, p: 1 / (1 + math.Exp(-eps)), q: 1 / (1 + math.Exp(eps))}
}

// logPMF is log P[B = k], by Loader's saddle-point form (the one R's
// dbinom uses): it stays accurate for counts where lgamma(r+1) − lgamma(k+1)
// − lgamma(r−k+1) would cancel away every digit (r = 1e15).
func (b binomial) logPMF(k int) float64 {
	n, x := float64(b.r), float64(k)
	switch {
	case k < 0 || k > b.r:
		return math.Inf(-1)
	case k == 0:
		if b.p < 0.1 {
			return -bd0(n, n*b.q) - n*b.p
		}
		return n * math.Log(b.q)
	case k == b.r:
		if b.q < 0.1 {
			return -bd0(n, n*b.p) - n*b.q
		}
		return n * math.Log(b.p)
	}
	lc := stirlerr(n) - stirlerr(x) - stirlerr(n-x) - bd0(x, n*b.p) - bd0(n-x, n*b.q)
	lf := math.Log(2*math.Pi) + math.Log(x) + math.Log1p(-x/n)
	return lc - 0.5*lf
}

// logRatio is log p(k+dir)/p(k) for dir = ±1.
func (b binomial) logRatio(k, dir int) float64 {
	if dir > 0 {
		return math.Log(float64(b.r-k)) - math.Log(float64(k+1)) + b.eps
	}
	return math.Log(float64(k)) - math.Log(float64(b.r-k+1)) - b.eps
}

// walk visits the terms p(k0), p(k0+dir), …, count of them, in blocks: after
// each block it calls visit with the number of terms covered before and
// after the block and an upper bound on the log of their sum (exact while
// the blocks hold one term). visit returns false to stop the walk.
//
// A long block's geometric bound is loose where the ratio changes along
// it, so near the mode (within about 20 standard deviations, where the
// mass is) blocks are kept short enough for a relative looseness of
// about tightness. Farther out, where the terms rise steeply along the walk,
// blocks grow with the terms covered and the sum is bounded instead at the
// block's last term: with ratios at least ρ > 1 all the way, every earlier
// term is at most p(k)/ρ^j, so the sum so far is at most p(k)/(1 − 1/ρ).
func (b binomial) walk(ctx context.Context, k0, dir, count int, visit func(before, done int, logSum float64) bool) error {
	const tightness = 1e-4
	steep := 20 / math.Sqrt(float64(b.r)*b.p*b.q) // a ratio this far above 1 is 20 sd from the mode
	logSum := math.Inf(-1)
	for done, blocks := 0, 0; done < count; blocks++ {
		if blocks%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		k := k0 + dir*done
		lr := b.logRatio(k, dir)
		n := 1
		if done >= exactTerms {
			n = done / blockGrowth
			if !(lr > steep) {
				curv := 1/float64(k+1) + 1/float64(b.r-k+1) // how fast log ρ falls per term
				n = max(1, min(n, int(math.Sqrt(2*tightness/curv))))
			}
		}
		n = min(n, count-done)
		// A steep block must end where the terms still rise steeply, or
		// the bound at its last term does not apply.
		var into float64
		for n > 1 {
			if into = b.logRatio(k+dir*(n-2), dir); !(lr > steep) || into > steep/2 {
				break
			}
			n /= 2
		}
		s := b.logPMF(k)
		if n > 1 {
			s += geomLogSum(lr, n)
		}
		logSum = logAdd(logSum, s)
		if n > 1 && into > 0 {
			logSum = math.Min(logSum, b.logPMF(k+dir*(n-1))-math.Log(-math.Expm1(-into)))
		}
		before := done
		done += n
		if !visit(before, done, logSum) {
			return nil
		}
	}
	return nil
}

// logRest is an upper bound on log Σ_{j≥0} p(k + dir·j), finite only where
// the ratio at k is below 1 (every later ratio is smaller).
func (b binomial) logRest(k, dir int) float64 {
	lr := b.logRatio(k, dir)
	if !(lr < 0) {
		return math.Inf(1)
	}
	return b.logPMF(k) - math.Log(-math.Expm1(lr))
}

// upperTail is an upper bound on log P[B ≥ v] (exact up to rounding while
// the walk holds one term per block).
func (b binomial) upperTail(ctx context.Context, v int) (float64, error) {
	if v <= 0 {
		return 0, nil
	}
	if v > b.r {
		return math.Inf(-1), nil
	}
	var out float64
	err := b.walk(ctx, v, 1, b.r-v+1, func(_, done int, logSum float64) bool {
		out = logSum
		if k := v + done; k <= b.r {
			if rest := b.logRest(k, 1); rest < logSum-negligible {
				out = logAdd(logSum, rest)
				return false
			}
		}
		return true
	})
	return out, err
}

// maxMeanBelow is an upper bound on max_{i=1…v} P[v−i ≤ B < v]/i: within a
// block of i from before+1 to done, the sum is at most the bound at done and
// i at least before+1.
func (b binomial) maxMeanBelow(ctx context.Context, v int) (float64, error) {
	alpha := 0.0
	err := b.walk(ctx, v-1, -1, v, func(before, done int, logSum float64) bool {
		alpha = math.Max(alpha, math.Exp(logSum)/float64(before+1))
		if 1/float64(done+1) <= alpha {
			return false // a sum of probabilities is at most 1
		}
		if k := v - 1 - done; k >= 0 {
			if rest := b.logRest(k, -1); rest < logSum-negligible {
				alpha = math.Max(alpha, math.Exp(logAdd(logSum, rest))/float64(done+1))
				return false
			}
		}
		return true
	})
	return alpha, err
}

// geomLogSum is log Σ_{j<n} e^(j·lr), without overflow for large n·lr.
func geomLogSum(lr float64, n int) float64 {
	fn := float64(n)
	switch {
	case math.IsInf(lr, -1):
		return 0
	case lr == 0:
		return math.Log(fn)
	case lr < 0:
		return math.Log(-math.Expm1(fn*lr)) - math.Log(-math.Expm1(lr))
	}
	return (fn-1)*lr + math.Log(-math.Expm1(-fn*lr)) - math.Log(-math.Expm1(-lr))
}

// stirlerr is log(n!) − log(√(2π n)·(n/e)^n), the error of Stirling's
// formula, by its asymptotic series beyond 15 (Loader 2000).
func stirlerr(n float64) float64 {
	const (
		s0 = 1.0 / 12
		s1 = 1.0 / 360
		s2 = 1.0 / 1260
		s3 = 1.0 / 1680
		s4 = 1.0 / 1188
	)
	if n <= 15 {
		lg, _ := math.Lgamma(n + 1)
		return lg - (n+0.5)*math.Log(n) + n - 0.5*math.Log(2*math.Pi)
	}
	nn := n * n
	switch {
	case n > 500:
		return (s0 - s1/nn) / n
	case n > 80:
		return (s0 - (s1-s2/nn)/nn) / n
	case n > 35:
		return (s0 - (s1-(s2-s3/nn)/nn)/nn) / n
	}
	return (s0 - (s1-(s2-(s3-s4/nn)/nn)/nn)/nn) / n
}

// bd0 is x·log(x/np) + np − x, computed without cancellation when x is
// near np (Loader 2000).
func bd0(x, np float64) float64 {
	if math.Abs(x-np) < 0.1*(x+np) {
		v := (x - np) / (x + np)
		s := (x - np) * v
		ej := 2 * x * v
		v *= v
		for j := 1; j < 1000; j++ {
			ej *= v
			s1 := s + ej/float64(2*j+1)
			if s1 == s {
				return s1
			}
			s = s1
		}
		return s
	}
	return x*math.Log(x/np) + np - x
}
