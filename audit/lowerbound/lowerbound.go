package lowerbound

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// ErrInvalid marks counts, scores or levels the statistics cannot use.
var ErrInvalid = errors.New("invalid audit input")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// logAdd returns log(e^a + e^b).
func logAdd(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// OneRunPValue is the p-value of the hypothesis "the mechanism is
// (ε, δ)-DP" after a one-run audit (Steinke, Nasr & Jagielski 2023,
// Theorem 3 / Proposition 5) with m canaries, each included independently
// with probability ½, r guesses of which v were correct:
//
//	min(1, β + 2mδ·α),  q = e^ε/(1+e^ε),  β = P[Bin(r, q) ≥ v],
//	α = max_{i=1…v} P[v−i ≤ Bin(r, q) < v] / i.
//
// The sums are exact for their first exactTerms terms; beyond, they are
// bounded from above in blocks (see binomial.walk), so the work does not
// grow with the counts and the value returned is never below the exact
// p-value: a bound built on it stays a valid lower bound on ε.
func OneRunPValue(eps, delta float64, m, r, v int) float64 {
	p, _ := oneRunPValue(context.Background(), eps, delta, m, r, v)
	return p
}

// oneRunPValue is OneRunPValue, stopping with ctx's error when ctx is done.
func oneRunPValue(ctx context.Context, eps, delta float64, m, r, v int) (float64, error) {
	b := newBinomial(r, eps)
	logBeta, err := b.upperTail(ctx, v)
	if err != nil {
		return 0, err
	}
	beta := math.Exp(logBeta)
	if beta >= 1 || delta == 0 || v == 0 {
		return math.Min(1, beta), nil
	}
	alpha, err := b.maxMeanBelow(ctx, v)
	if err != nil {
		return 0, err
	}
	return math.Min(1, beta+2*float64(m)*delta*alpha), nil
}

// Result is a one-run audit's lower bound with the counts behind it.
type Result struct {
	EpsilonLower float64 `json:"epsilon_lower"`
	Canaries     int     `json:"canaries"`
	Guesses      int     `json:"guesses"`
	Correct      int     `json:"correct"`
	Delta        float64 `json:"delta"`
	Confidence   float64 `json:"confidence"`
	// Thresholds is the number of guess counts tried on the scores; the
	// significance was divided by it (Bonferroni), so the bound holds for
	// the best of them.
	Thresholds int `json:"thresholds"`
}

// OneRunEpsilon is the largest ε whose (ε, δ)-DP hypothesis is rejected at
// confidence 1 − p (p-value < p) given m canaries, r guesses and v correct,
// found by bisection (the p-value grows with ε); 0 when even ε = 0 is not
// rejected.
func OneRunEpsilon(m, r, v int, delta, confidence float64) (float64, error) {
	return OneRunEpsilonContext(context.Background(), m, r, v, delta, confidence)
}

// OneRunEpsilonContext is OneRunEpsilon, returning ctx's error when ctx is
// done before the bound is found (the sums check it every few thousand
// terms).
func OneRunEpsilonContext(ctx context.Context, m, r, v int, delta, confidence float64) (float64, error) {
	if m < 1 || r < 0 || r > m || v < 0 || v > r {
		return 0, invalidf("need 0 ≤ correct ≤ guesses ≤ canaries and canaries ≥ 1, got m=%d r=%d v=%d", m, r, v)
	}
	if !(delta >= 0 && delta < 1) {
		return 0, invalidf("delta must be in [0,1), got %v", delta)
	}
	if !(confidence > 0 && confidence < 1) {
		return 0, invalidf("confidence must be in (0,1), got %v", confidence)
	}
	p := 1 - confidence
	rejected := func(eps float64) (bool, error) {
		pv, err := oneRunPValue(ctx, eps, delta, m, r, v)
		return pv < p, err
	}
	if ok, err := rejected(0); err != nil || !ok {
		return 0, err
	}
	lo, hi := 0.0, 1.0
	for {
		ok, err := rejected(hi)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		lo, hi = hi, 2*hi
		if hi > 1e3 {
			return lo, nil
		}
	}
	for i := 0; i < 100 && hi-lo > 1e-12*hi; i++ {
		mid := (lo + hi) / 2
		ok, err := rejected(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// Scores turns canary scores (higher: more likely included) and the
// true inclusion bits into the strongest one-run bound over the guess
// counts in ks (each k guesses "in" for the k highest and "out" for the k
// lowest scores; 2k ≤ m). With more than one k the confidence is divided
// among them (the significance p/len(ks) per test), so the bound stays
// valid although k was chosen by looking at the scores.
func Scores(scores []float64, included []bool, ks []int, delta, confidence float64) (Result, error) {
	m := len(scores)
	if m == 0 || len(included) != m {
		return Result{}, invalidf("%d scores for %d inclusion bits", m, len(included))
	}
	if len(ks) == 0 {
		return Result{}, invalidf("no guess counts")
	}
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	// Sort by score, descending; ties broken by index (deterministic).
	sortByScore(order, scores)
	perTest := 1 - (1-confidence)/float64(len(ks))
	best := Result{Canaries: m, Delta: delta, Confidence: confidence, Thresholds: len(ks)}
	for _, k := range ks {
		if k < 1 || 2*k > m {
			return Result{}, invalidf("guess count %d outside [1, %d]", k, m/2)
		}
		v := 0
		for _, i := range order[:k] {
			if included[i] {
				v++
			}
		}
		for _, i := range order[m-k:] {
			if !included[i] {
				v++
			}
		}
		eps, err := OneRunEpsilon(m, 2*k, v, delta, perTest)
		if err != nil {
			return Result{}, err
		}
		if eps >= best.EpsilonLower {
			best.EpsilonLower, best.Guesses, best.Correct = eps, 2*k, v
		}
	}
	return best, nil
}

func sortByScore(order []int, scores []float64) {
	sort.Slice(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if scores[a] != scores[b] {
			return scores[a] > scores[b]
		}
		return a < b
	})
}

// ClopperPearson returns the exact two-sided (1 − alpha) confidence
// interval of a binomial proportion with k successes in n trials.
func ClopperPearson(k, n int, alpha float64) (lo, hi float64, err error) {
	if n < 1 || k < 0 || k > n || !(alpha > 0 && alpha < 1) {
		return 0, 0, invalidf("clopper-pearson: need 0 ≤ k ≤ n, n ≥ 1, alpha in (0,1); got k=%d n=%d alpha=%v", k, n, alpha)
	}
	if k > 0 {
		lo = distuv.Beta{Alpha: float64(k), Beta: float64(n - k + 1)}.Quantile(alpha / 2)
	}
	hi = 1
	if k < n {
		hi = distuv.Beta{Alpha: float64(k + 1), Beta: float64(n - k)}.Quantile(1 - alpha/2)
	}
	return lo, hi, nil
}

// ManyRunEpsilon is the many-run audit's lower bound (Jagielski et al.
// 2020; Nasr et al. 2021): with fp false positives among negRuns runs
// without the canary and fn false negatives among posRuns runs with it, at
// a threshold fixed in advance, and Clopper–Pearson upper bounds on both
// rates at confidence level confidence (each side at 1 − (1−confidence)/2),
//
//	ε_lower = max(ln((1 − FNR_ub − δ)/FPR_ub), ln((1 − FPR_ub − δ)/FNR_ub), 0).
func ManyRunEpsilon(fp, negRuns, fn, posRuns int, delta, confidence float64) (float64, error) {
	if !(confidence > 0 && confidence < 1) {
		return 0, invalidf("confidence must be in (0,1), got %v", confidence)
	}
	alpha := 1 - confidence // split between the two rates, each one-sided
	_, fprUB, err := ClopperPearson(fp, negRuns, alpha)
	if err != nil {
		return 0, fmt.Errorf("false positives: %w", err)
	}
	_, fnrUB, err := ClopperPearson(fn, posRuns, alpha)
	if err != nil {
		return 0, fmt.Errorf("false negatives: %w", err)
	}
	eps := 0.0
	if fprUB > 0 && 1-fnrUB-delta > 0 {
		eps = math.Max(eps, math.Log((1-fnrUB-delta)/fprUB))
	}
	if fnrUB > 0 && 1-fprUB-delta > 0 {
		eps = math.Max(eps, math.Log((1-fprUB-delta)/fnrUB))
	}
	return eps, nil
}
