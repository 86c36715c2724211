package trainer

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/internal/zigattack"
	"github.com/dptrain/dptrain/rng"
)

// attackRounds is the number of releases each attack sees.
const attackRounds = 200

// integerCandidates lists the integers (or half-integers, step ½) within
// 12σ of y.
func integerCandidates(y, sigma, step float64) []float64 {
	var out []float64
	for c := math.Ceil((y-12*sigma)/step) * step; c <= y+12*sigma; c += step {
		out = append(out, c)
	}
	return out
}

// countAttack runs the floating-point attack (internal/zigattack) on
// attackRounds releases y = release(i, c) of the true values c = truth(i),
// assuming y = c + σ·x with x a NormFloat64 draw. It returns how often it
// found the true value alone, and calls check(y, candidates) at each
// release.
func countAttack(sigma, step float64, truth func(int) float64, release func(int, float64) float64, check func(y float64, cands []float64)) (recovered int) {
	for i := range attackRounds {
		c := truth(i)
		y := release(i, c)
		got := zigattack.Candidates(y, integerCandidates(y, sigma, step),
			func(c, x float64) float64 { return c + sigma*x }, func(c float64) float64 { return (y - c) / sigma })
		if len(got) == 1 && got[0] == c {
			recovered++
		}
		if check != nil {
			check(y, got)
		}
	}
	return recovered
}

// exactCheck asserts what makes an exact count release safe: y lies on the
// grid of the counts (step 1 or ½), so under the exact sampler, whose
// rounded-Gaussian noise reaches every grid point, every candidate within
// reach is possible (more than one); and the float attack, which assumes
// NormFloat64 noise, can read no more than "the noise was 0" (candidates ⊆
// {y}): it never singles out a value the release does not show.
func exactCheck(t *testing.T, step float64) func(float64, []float64) {
	return func(y float64, cands []float64) {
		t.Helper()
		if y/step != math.Trunc(y/step) {
			t.Fatalf("release %v is not on the grid of step %g", y, step)
		}
		for _, c := range cands {
			if c != y {
				t.Fatalf("release %v: the float attack singles out %v", y, c)
			}
		}
	}
}

// HIGH 2 of issue 37: the attack recovers the clipped count from the old
// release float64(c) + σ_b·NormFloat64() at (almost) every step; the exact
// release leaves every candidate possible at every step (exactCheck).
func TestClippedCountResistsFloatAttack(t *testing.T) {
	const sigmaB = 2.0
	counts := rng.New(3)
	truth := make([]float64, attackRounds)
	for i := range truth {
		truth[i] = float64(counts.IntN(300))
	}
	old := rng.New(4)
	if got := countAttack(sigmaB, 1, func(i int) float64 { return truth[i] }, func(_ int, c float64) float64 {
		return c + sigmaB*old.NormFloat64() // the release before the fix
	}, nil); !logOld(t, got) {
		t.Fatalf("the attack recovered the old release's count at %d of %d steps; it has lost its teeth", got, attackRounds)
	}
	cc, err := newClipCount(sigmaB, 100, rng.New(4))
	if err != nil {
		t.Fatal(err)
	}
	if got := countAttack(sigmaB, 1, func(i int) float64 { return truth[i] }, func(i int, c float64) float64 {
		y, _ := cc.release(int(c))
		return y
	}, exactCheck(t, 1)); got > attackRounds/2 {
		t.Errorf("the noise was 0 at %d of %d steps; want about 20%% (σ_b = 2)", got, attackRounds)
	}
}

// The same for the clip-quantile's centred count (a half-integer).
func TestQuantileCountResistsFloatAttack(t *testing.T) {
	const sigmaB = 2.5
	counts := rng.New(5)
	truth := make([]float64, attackRounds)
	for i := range truth {
		truth[i] = float64(counts.IntN(200)) - 100 + 0.5*float64(counts.IntN(2))
	}
	old := rng.New(6)
	if got := countAttack(sigmaB, 0.5, func(i int) float64 { return truth[i] }, func(_ int, c float64) float64 {
		return c + sigmaB*old.NormFloat64() // the release before the fix
	}, nil); !logOld(t, got) {
		t.Fatalf("the attack recovered the old release's count at %d of %d steps; it has lost its teeth", got, attackRounds)
	}
	var cfg Config
	cfg.ClipQuantile, cfg.QuantileCountSigma, cfg.ClipNorm = 0.5, sigmaB, 1
	q := &quantileState{sigmaB: sigmaB, rng: rng.New(6)}
	var err error
	if q.noise, err = newQuantileNoise(cfg.QuantileCountSigma); err != nil {
		t.Fatal(err)
	}
	if got := countAttack(sigmaB, 0.5, func(i int) float64 { return truth[i] }, func(_ int, c float64) float64 {
		q.count = c
		return q.release()
	}, exactCheck(t, 0.5)); got > attackRounds/2 {
		t.Errorf("the noise was 0 at %d of %d steps; want about 16%% (2σ_b = 5)", got, attackRounds)
	}
}

// logOld reports how often the attack recovered the old release's value and
// whether that is at least 95% of the releases.
func logOld(t *testing.T, recovered int) bool {
	t.Helper()
	t.Logf("old release: true value recovered alone at %d of %d releases", recovered, attackRounds)
	return recovered >= attackRounds*95/100
}
