package trainer

import (
	"context"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/rng"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/dptrain/dptrain/audit/lowerbound"
)

// auditGuessCounts are the guess counts the audit tries (k "in" and k
// "out" guesses each); the significance is divided among them.
func auditGuessCounts(m int) []int {
	var ks []int
	for _, f := range []int{20, 10, 5, 2} {
		if k := m / f; k >= 1 {
			ks = append(ks, k)
		}
	}
	return ks
}

// auditOnce runs one audit training with the given negative-control hooks
// and returns the lower bound from the released canary evidence and the
// run's accounted ε.
func auditOnce(t *testing.T, h *auditHooks, noise mechanism.Noise, m int, eps float64) (lowerbound.Result, float64) {
	t.Helper()
	return auditOnceWith(t, h, noise, m, eps, NoiseContinuous)
}

// auditOnceWith is auditOnce with the given gradient noise kind.
func auditOnceWith(t *testing.T, h *auditHooks, noise mechanism.Noise, m int, eps float64, kind Noise) (lowerbound.Result, float64) {
	t.Helper()
	c := small(t)
	c.Noise = kind
	c.Model, c.BatchSize, c.Steps, c.Sigma, c.Epsilon = "logreg", 250, 100, 0, eps
	c.Optimizer, c.Momentum, c.LR = "sgd", 0, 0.5
	c.EvalEvery, c.CheckpointEvery, c.PrivateDiagnostics, c.KeepCheckpoint = 0, 0, false, false
	c.AuditCanaries, c.AuditKind = m, "gradient"
	testAuditHooks = h
	defer func() { testAuditHooks = nil }()
	s, err := Run(context.Background(), c, Options{Noise: noise})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ReadCanaries(c.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	var best lowerbound.Result
	for _, sc := range ev.Scores {
		r, err := lowerbound.Scores(sc, ev.Included, auditGuessCounts(m), c.Delta, 1-0.05/float64(len(ev.Scores)))
		if err != nil {
			t.Fatal(err)
		}
		if r.EpsilonLower >= best.EpsilonLower {
			best = r
		}
	}
	return best, s.Best.Epsilon
}

// The audit's negative controls (issue 18): with the mechanism broken on
// purpose — no noise, a tenth of the noise, sampling at 4q, a raw canary
// statistic released beside the model — while the account still says σ and
// q, the one-run audit of the released canary block must prove more than the
// accounted ε; with the mechanism intact it must not. 500 gradient canaries,
// logistic regression on the synthetic mixture, 100 steps at q = 0.05,
// calibrated to ε = 1 (seeded: every figure below is deterministic).
func TestAuditNegativeControls(t *testing.T) {
	const m, eps = 500, 1.0
	for _, tc := range []struct {
		name  string
		h     *auditHooks
		noise mechanism.Noise // replaces the mechanism's noise (nil: kept)
		min   float64         // ε_lower must exceed min·ε (0: must stay ≤ ε)
	}{
		{"correct mechanism", nil, nil, 0},
		{"noise off", nil, noNoise{}, 2.5},
		{"noise at σ/10", &auditHooks{noiseScale: 0.1}, nil, 2.5},
		{"sampling at 4q", &auditHooks{rateScale: 4}, nil, 1},
		{"unaccounted statistic released", &auditHooks{leakCounts: true}, nil, 2.5},
	} {
		r, acc := auditOnce(t, tc.h, tc.noise, m, eps)
		t.Logf("%-32s ε_lower %.3f (%d of %d guesses correct), accounted ε %.3f", tc.name, r.EpsilonLower, r.Correct, r.Guesses, acc)
		if tc.min == 0 && r.EpsilonLower > acc {
			t.Errorf("%s: ε_lower %v contradicts the accounted ε %v", tc.name, r.EpsilonLower, acc)
		}
		if tc.min > 0 && !(r.EpsilonLower > tc.min*acc) {
			t.Errorf("%s: ε_lower %v not above %g × the accounted ε %v: the audit missed a broken mechanism", tc.name, r.EpsilonLower, tc.min, acc)
		}
	}
}

// The canary evidence is in the right places: the block and its scores in
// release/ (declared fields), the inclusion bits only in private/.
func TestAuditCanaryFiles(t *testing.T) {
	c := small(t)
	c.Model, c.Steps, c.AuditCanaries, c.AuditKind = "logreg", 5, 50, "gradient"
	c.PrivateDiagnostics, c.KeepCheckpoint = false, false
	run(t, c, Options{})
	rel := jsonObjects(t, filepath.Join(c.OutDir, "release", "canaries.json"))
	for k := range rel[0] {
		if p := ReleaseFields()["canaries.json"][k]; !released(p) {
			t.Errorf("release/canaries.json key %q has provenance %q", k, p)
		}
	}
	if _, ok := rel[0]["included"]; ok {
		t.Error("the inclusion bits were released")
	}
	if fi, err := os.Stat(filepath.Join(c.OutDir, "private", "canaries.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("private/canaries.json: %v", err)
	}
	bad := small(t)
	bad.AuditCanaries, bad.AuditKind, bad.Clip = 10, "gradient", "hybrid"
	if err := bad.Validate(); err == nil {
		t.Error("gradient canaries with hybrid clipping accepted")
	}
}

// Input canaries: the included ones join the training set (n grows by their
// number), all m leave the test set, and every canary gets a finite score
// from the released model; the bits stay private.
func TestInputCanaries(t *testing.T) {
	c := small(t)
	c.Model, c.Steps, c.AuditCanaries, c.AuditKind = "logreg", 5, 40, "input"
	c.PrivateDiagnostics, c.KeepCheckpoint = false, false
	s := run(t, c, Options{})
	ev, err := ReadCanaries(c.OutDir)
	if err != nil {
		t.Fatal(err)
	}
	in := 0
	for _, b := range ev.Included {
		if b {
			in++
		}
	}
	if s.TrainN != 5000+in || s.TestN != 1000-40 || ev.Kind != "input" || len(ev.Scores["-loss"]) != 40 {
		t.Fatalf("train %d (want %d), test %d, kind %s, %d scores", s.TrainN, 5000+in, s.TestN, ev.Kind, len(ev.Scores["-loss"]))
	}
	for j, v := range ev.Scores["-loss"] {
		if math.IsNaN(v) || math.IsInf(v, 0) || v > 0 {
			t.Errorf("canary %d: score %v (a negative loss)", j, v)
		}
	}
}

// noNoise adds nothing: the negative control that turns the noise off.
type noNoise struct{}

func (noNoise) Add([]float32, *rng.Stream) {}
func (noNoise) TotalVariance() float64     { return 0 }
