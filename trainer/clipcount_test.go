package trainer

import (
	"context"
	"errors"
	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/mechanism"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/rng"
)

func TestJointSigma(t *testing.T) {
	for _, tc := range []struct{ sigma, sigmaB, want float64 }{
		{1, 0, 1},                   // no count: the step's own σ
		{1, 1, 1 / math.Sqrt2},      // equal noise: √2 smaller
		{1.1, 5, 1.074308913375599}, // 1/√(0.826446… + 0.04) = 1/0.930831…
		{2, 2 * math.Sqrt(3), math.Sqrt(3)},
	} {
		if got := mechanism.JointSigma(tc.sigma, tc.sigmaB); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("mechanism.JointSigma(%v, %v) = %v, want %v", tc.sigma, tc.sigmaB, got, tc.want)
		}
	}
}

// countRun is a small seeded run with a released clipped count; a tiny clip
// norm clips most examples.
func countRun(t *testing.T) Config {
	c := small(t)
	c.Model, c.Steps, c.ClipNorm, c.LR = "logreg", 8, 0.05, 0.5
	c.ClippedCountSigma = 2
	return c
}

// The released count is the private count plus the noise drawn from the run's
// "clipped-count" stream (recomputed here from the seed, draw for draw, an
// integer from the exact sampler), in
// release/metrics.jsonl on every step; the run's ε is the RDP account of the
// joint Gaussian at σ_eff, more than the same run without the count.
func TestClippedCountReleasedAndAccounted(t *testing.T) {
	c := countRun(t)
	s := run(t, c, Options{})
	diag := mustMetrics(t, c.OutDir)
	noise := rng.New(c.Seed).Child("clipped-count")
	exact, err := lattice.NewCountNoise(c.ClippedCountSigma)
	if err != nil {
		t.Fatal(err)
	}
	expected := float64(c.BatchSize)
	clippedSome := false
	for _, r := range diag {
		if r.ClippedCountNoised == nil || r.ClippedFracNoised == nil {
			t.Fatalf("step %d: no noised count", r.Step)
		}
		clipped := math.Round(r.ClippedFrac * float64(r.BatchSize))
		clippedSome = clippedSome || clipped > 0
		w, err := exact.Release(int64(clipped), noise)
		if err != nil {
			t.Fatal(err)
		}
		want := float64(w)
		if *r.ClippedCountNoised != want || math.Abs(*r.ClippedFracNoised-want/expected) > 1e-12 {
			t.Errorf("step %d: released count %v (fraction %v), want %v + round(σ_b·z) = %v", r.Step, *r.ClippedCountNoised, *r.ClippedFracNoised, clipped, want)
		}
	}
	if !clippedSome {
		t.Fatal("no example was clipped: the test has lost its teeth")
	}
	rel := jsonObjects(t, filepath.Join(c.OutDir, "release", "metrics.jsonl"))
	if len(rel) != c.Steps {
		t.Fatalf("release/metrics.jsonl: %d lines, want %d", len(rel), c.Steps)
	}
	for i, r := range rel {
		if _, ok := r["clipped_count_noised"]; !ok {
			t.Errorf("release/metrics.jsonl line %d lacks clipped_count_noised", i+1)
		}
		for _, raw := range []string{"clipped_frac", "grad_norm_max", "batch_size"} {
			if _, ok := r[raw]; ok {
				t.Errorf("release/metrics.jsonl line %d carries the raw %s", i+1, raw)
			}
		}
	}
	q := float64(c.BatchSize) / float64(s.TrainN)
	eps := func(sigma float64) float64 {
		a, err := accountant.NewRDP()
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Compose(accountant.PoissonSampled{Q: q, Event: accountant.Gaussian{Sigma: sigma}}, c.Steps); err != nil {
			t.Fatal(err)
		}
		b, err := a.Epsilon(c.Delta)
		if err != nil {
			t.Fatal(err)
		}
		return b.Epsilon
	}
	joint, alone := eps(mechanism.JointSigma(c.Sigma, c.ClippedCountSigma)), eps(c.Sigma)
	if math.Abs(s.Epsilon["rdp"]-joint) > 1e-12 || !(joint > alone) {
		t.Errorf("run's RDP ε %v; joint Gaussian at σ_eff %v, gradient alone %v", s.Epsilon["rdp"], joint, alone)
	}
	// The PLD accountant accounts the same joint Gaussian, more tightly.
	pld, err := accountant.PLDPoissonEpsilon(q, mechanism.JointSigma(c.Sigma, c.ClippedCountSigma), c.Steps, c.Delta)
	if err != nil || s.Best.Accountant != "pld" || s.Best.Epsilon != pld.Epsilon || !(pld.Epsilon < joint) {
		t.Errorf("run's best %+v; PLD of the joint Gaussian %v (%v), RDP %v", s.Best, pld.Epsilon, err, joint)
	}
	found := false
	for _, n := range s.Notes {
		found = found || strings.Contains(n, "σ_eff = (σ⁻² + σ_b⁻²)^(−1/2) = 0.8944")
	}
	if !found {
		t.Errorf("summary notes do not state σ_eff: %q", s.Notes)
	}
}

// Calibration meets the target ε with the count's cost included (a larger σ
// than without it); a σ_b that alone spends more than the target is refused.
func TestClippedCountCalibration(t *testing.T) {
	c := countRun(t)
	c.Sigma, c.Epsilon, c.Steps = 0, 2, 20
	with := run(t, c, Options{})
	c0 := c
	c0.ClippedCountSigma, c0.OutDir = 0, t.TempDir()
	without := run(t, c0, Options{})
	if !(with.Sigma > without.Sigma) || with.Best.Epsilon > c.Epsilon || with.Best.Epsilon < 0.98*c.Epsilon {
		t.Errorf("calibrated σ %v (ε %v) with the count, %v without; target ε %v", with.Sigma, with.Best.Epsilon, without.Sigma, c.Epsilon)
	}
	c.ClippedCountSigma, c.OutDir = 0.05, t.TempDir()
	if _, err := Run(context.Background(), c, Options{}); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "clipped_count_sigma 0.05 alone spends") {
		t.Errorf("σ_b = 0.05 for ε = 2: %v", err)
	}
}

// Every combination the joint account does not describe is refused, by name.
func TestClippedCountRefusals(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Sampler, c.Q2 = "twice", 0.5 }, `needs sampler poisson, got "twice"`},
		{func(c *Config) { c.Sampler = "shuffle" }, `needs sampler poisson, got "shuffle"`},
		{func(c *Config) { c.Clip = "per-layer" }, `needs clip flat or linf`},
		{func(c *Config) { c.Clip, c.SubspaceRanks, c.PublicN = "subspace", []int{4}, 50 }, `needs clip flat or linf`},
		{func(c *Config) { c.Preprocess, c.SigmaMin = "standardize", 0.1 }, "cannot be combined with preprocessing"},
		{func(c *Config) { c.PerInstance = 3 }, "cannot be combined with per_instance"},
		{func(c *Config) { c.ClippedCountSigma = -1 }, "clipped_count_sigma must be > 0"},
		{func(c *Config) { c.ClippedCountSigma = math.NaN() }, "clipped_count_sigma must be > 0"},
		{func(c *Config) { c.ClippedCountSigma = 1e-4 }, "clipped_count_sigma must be in [2^-10, 2^52]"},
	} {
		c := countRun(t)
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
	ok := countRun(t)
	ok.Clip = "linf"
	if err := ok.Validate(); err != nil {
		t.Errorf("linf clipping with a count: %v", err)
	}
}

// A final-only run that releases the count every step releases something
// intermediate: the hidden-state bound is shown as not applicable, saying why.
func TestClippedCountVoidsHiddenBound(t *testing.T) {
	c := countRun(t)
	c.Optimizer, c.Momentum, c.Radius, c.FinalOnly = "sgd", 0, 5, true
	s := run(t, c, Options{})
	seen := false
	for _, b := range s.Bounds {
		if b.Name == "hidden" {
			seen = true
			if b.Applicable || b.Reason != mechanism.HiddenCountReason {
				t.Errorf("hidden bound applicable=%v, reason %q", b.Applicable, b.Reason)
			}
		}
	}
	if !seen {
		t.Fatal("no hidden-state bound in a final-only projected run")
	}
	if s.Best.Accountant == "hidden" {
		t.Error("the hidden-state bound is the result of a run that releases a count every step")
	}
}

// An interrupted run resumed from its checkpoint releases the same counts as
// an uninterrupted one (the count's noise stream is checkpointed).
func TestClippedCountResumes(t *testing.T) {
	c := countRun(t)
	run(t, c, Options{})
	whole := mustMetrics(t, c.OutDir)
	c2 := c
	c2.OutDir = t.TempDir()
	if _, err := Run(context.Background(), c2, Options{StopAfter: 3}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	// A different σ_b is a different mechanism: refused, by name.
	c3 := c2
	c3.ClippedCountSigma = 4
	if _, err := Run(context.Background(), c3, Options{Resume: true}); err == nil || !strings.Contains(err.Error(), "clipped_count_sigma: checkpoint 2, now 4") {
		t.Errorf("resume with another clipped_count_sigma: %v", err)
	}
	run(t, c2, Options{Resume: true})
	parts := mustMetrics(t, c2.OutDir)
	if len(parts) != len(whole) {
		t.Fatalf("%d records resumed, %d whole", len(parts), len(whole))
	}
	for i := range whole {
		if *parts[i].ClippedCountNoised != *whole[i].ClippedCountNoised {
			t.Errorf("step %d: resumed count %v, uninterrupted %v", i+1, *parts[i].ClippedCountNoised, *whole[i].ClippedCountNoised)
		}
	}
	if _, err := os.Stat(filepath.Join(c2.OutDir, "private", "checkpoint.json")); err != nil {
		t.Errorf("kept checkpoint: %v", err)
	}
}
