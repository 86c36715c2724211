package trainer

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
)

// small is a fast configuration on the synthetic Gaussian mixture.
func small(t *testing.T) Config {
	c := Default()
	c.Dataset, c.Model, c.Hidden = "synthetic", "mlp", []int{16}
	c.BatchSize, c.Steps, c.Epsilon, c.Sigma = 200, 30, 0, 1.0
	c.Optimizer, c.LR, c.Momentum, c.ClipNorm = "momentum", 1, 0.5, 1
	c.EvalEvery, c.CheckpointEvery, c.Plots = 10, 7, false
	c.OutDir = t.TempDir()
	return c
}

func run(t *testing.T, c Config, o Options) *Summary {
	t.Helper()
	s, err := Run(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A run interrupted and resumed from its checkpoint ends bit for bit where
// an uninterrupted run with the same seed ends: model, metrics and ε.
func TestResumeIsBitIdentical(t *testing.T) {
	for _, sampler := range []string{"poisson", "twice", "shuffle", "subspace"} {
		t.Run(sampler, func(t *testing.T) {
			c := small(t)
			c.Sampler = sampler
			switch sampler {
			case "twice":
				c.Q2, c.Clip, c.D0 = 0.5, "hybrid", 4
			case "subspace":
				// Twice sampling with subspace clipping; the basis is refreshed
				// at steps 10 and 20, and the run is interrupted in between.
				c.Sampler, c.Q2, c.Clip, c.SubspaceRanks, c.PublicN, c.SubspaceRefresh = "twice", 0.5, "subspace", []int{4, 8}, 50, 10
			}
			full := run(t, c, Options{})

			c2 := c
			c2.OutDir = t.TempDir()
			_, err := Run(context.Background(), c2, Options{StopAfter: 12})
			if !errors.Is(err, ErrInterrupted) {
				t.Fatalf("stop: %v", err)
			}
			resumed := run(t, c2, Options{Resume: true})

			if full.Epsilon[full.Best.Accountant] != resumed.Epsilon[resumed.Best.Accountant] || full.TestLoss != resumed.TestLoss {
				t.Fatalf("resumed run differs: ε %v vs %v, loss %v vs %v", full.Epsilon, resumed.Epsilon, full.TestLoss, resumed.TestLoss)
			}
			if !bytes.Equal(readFile(t, filepath.Join(c.OutDir, "model.bin")), readFile(t, filepath.Join(c2.OutDir, "model.bin"))) {
				t.Fatal("final models differ")
			}
			a, b := mustMetrics(t, c.OutDir), mustMetrics(t, c2.OutDir)
			if len(a) != c.Steps || len(b) != c.Steps {
				t.Fatalf("metrics have %d and %d records, want %d", len(a), len(b), c.Steps)
			}
			for i := range a {
				if a[i].Loss != b[i].Loss || a[i].EpsilonBest != b[i].EpsilonBest || a[i].BatchSize != b[i].BatchSize {
					t.Fatalf("step %d differs: %+v vs %+v", i+1, a[i], b[i])
				}
			}
		})
	}
}

func mustMetrics(t *testing.T, dir string) []Record {
	t.Helper()
	r, err := ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The reported ε equals an independent composition of the same events.
func TestEpsilonMatchesIndependentAccount(t *testing.T) {
	c := small(t)
	c.Steps = 80
	s := run(t, c, Options{})
	want, err := accountant.PoissonEpsilon(float64(c.BatchSize)/float64(s.TrainN), c.Sigma, c.Steps, c.Delta)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Epsilon["rdp"]; math.Abs(got-want.Epsilon) > 1e-12 {
		t.Fatalf("ε %v, independent %v", got, want.Epsilon)
	}
	if s.Best.Accountant != "rdp" || s.Best.Relation != accountant.AddRemove {
		t.Fatalf("best %+v", s.Best)
	}
	if s.TestAcc < 0.6 {
		t.Fatalf("test accuracy %v: the MLP did not learn the mixture", s.TestAcc)
	}
}

// With a target ε, calibration meets it; with σ fixed, the run stops
// before the step that would exceed it.
func TestBudget(t *testing.T) {
	c := small(t)
	c.Sigma, c.Epsilon = 0, 2
	s := run(t, c, Options{})
	if e := s.Best.Epsilon; e > 2 || e < 2-0.01 {
		t.Fatalf("calibrated ε %v, want just below 2", e)
	}
	if !s.Calibrated {
		t.Fatal("not marked calibrated")
	}

	c = small(t)
	c.Sigma, c.Epsilon, c.Steps = 1.2, 2, 500
	s = run(t, c, Options{})
	if s.Steps >= 500 || s.Best.Epsilon > 2 {
		t.Fatalf("ran %d steps to ε %v", s.Steps, s.Best.Epsilon)
	}
	q := float64(c.BatchSize) / float64(s.TrainN)
	next, err := accountant.PoissonEpsilon(q, c.Sigma, s.Steps+1, c.Delta)
	if err != nil {
		t.Fatal(err)
	}
	if next.Epsilon <= 2 {
		t.Fatalf("stopped at %d steps but %d would still fit (ε %v)", s.Steps, s.Steps+1, next.Epsilon)
	}
}

// A projected plain-SGD run releasing only its final model gets the
// hidden-state bound beside RDP; a run with momentum is told why not.
func TestHiddenStateApplicability(t *testing.T) {
	c := small(t)
	// r = (D + 2ηC)/σ_param with σ_param = η·σ·C/E[B] is about 1 only
	// for small batches and large noise multipliers.
	c.Optimizer, c.Momentum, c.Radius, c.FinalOnly = "sgd", 0, 0.1, true
	c.BatchSize, c.Sigma, c.LR, c.Steps = 5, 10, 1, 20
	s := run(t, c, Options{})
	var hidden *accountant.TrackedBound
	for i := range s.Bounds {
		if s.Bounds[i].Name == "hidden" {
			hidden = &s.Bounds[i]
		}
	}
	if hidden == nil || !hidden.Applicable || hidden.Relation != accountant.ReplaceOne {
		t.Fatalf("hidden bound missing or not applicable: %+v", hidden)
	}
	if s.Best.Accountant != "rdp" {
		t.Fatalf("best bound %+v mixes relations", s.Best)
	}
	ck := readFile(t, filepath.Join(c.OutDir, "checkpoint.json"))
	if !bytes.Contains(ck, []byte(`"private":true`)) {
		t.Fatal("hidden-state checkpoint not marked private")
	}

	c = small(t)
	c.Radius = 5
	s = run(t, c, Options{})
	for _, b := range s.Bounds {
		if b.Name == "hidden" && (b.Applicable || b.Reason == "") {
			t.Fatalf("hidden bound applicable with momentum: %+v", b)
		}
	}
}

func TestDPSGDFComposesFeatureBudget(t *testing.T) {
	c := small(t)
	c.Model, c.DPSGDF, c.FeatureEps, c.FeatureCF = "logreg", true, 0.1, 10
	s := run(t, c, Options{})
	plain := small(t)
	plain.Model = "logreg"
	p := run(t, plain, Options{})
	if !(s.Epsilon["rdp"] > p.Epsilon["rdp"]) {
		t.Fatalf("DPSGD-F ε %v not above plain %v: the feature mean was not accounted", s.Epsilon["rdp"], p.Epsilon["rdp"])
	}
}

func TestRunRefusesBadSetups(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"cnn on vectors", func(c *Config) { c.Model = "cnn" }, "needs 1×28×28"},
		{"batch too big", func(c *Config) { c.BatchSize = 100000 }, "exceeds"},
		{"invalid", func(c *Config) { c.Delta = 2 }, "delta"},
		{"no step fits", func(c *Config) { c.Sigma, c.Epsilon = 0.3, 0.01 }, "not even one step"},
	}
	for _, tc := range tests {
		c := small(t)
		tc.edit(&c)
		_, err := Run(context.Background(), c, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestResumeRefusesOtherConfig(t *testing.T) {
	c := small(t)
	if _, err := Run(context.Background(), c, Options{StopAfter: 3}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	c.LR = 0.1
	if _, err := Run(context.Background(), c, Options{Resume: true}); err == nil || !strings.Contains(err.Error(), "different configuration") {
		t.Fatalf("resume with another lr: %v", err)
	}
}

func TestCancelWritesCheckpoint(t *testing.T) {
	c := small(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, c, Options{})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("cancelled run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c.OutDir, "checkpoint.json")); err != nil {
		t.Fatal("no checkpoint after cancel")
	}
}

// Non-private preprocessing is accounted by SRDP with the step's declared
// sensitivity; the plain RDP figure is shown but never used as the bound.
func TestSRDPAccountsPreprocessing(t *testing.T) {
	c := small(t)
	// Synthetic features are not in the unit ball; the embedded images are,
	// once scaled by the public constant 1/√d.
	c.Dataset, c.TrainLimit, c.TestLimit, c.BatchSize = "embedded", 1000, 200, 50
	c.Model, c.LipschitzMu, c.Sigma, c.Steps = "logreg", 1, 3, 10
	c.Preprocess, c.PCAK, c.EigenGapMin = "pca", 5, 0.5
	s := run(t, c, Options{})
	if s.Best.Accountant != "srdp" {
		t.Fatalf("best bound from %q, want srdp", s.Best.Accountant)
	}
	var plain *accountant.TrackedBound
	for i := range s.Bounds {
		if s.Bounds[i].Name == "rdp-ignoring-preprocessing" {
			plain = &s.Bounds[i]
		}
	}
	if plain == nil || plain.Applicable {
		t.Fatalf("comparison RDP missing or applicable: %+v", plain)
	}
	// Independent composition of the same declared event.
	n := 1000.0
	gap := c.EigenGapMin
	d2 := 4 * (3*n + 2) / (n * (n - 1) * gap) // Proposition 5, rank reduction
	want := accountant.NewSRDP()
	ev := accountant.Preprocessed{Delta2: d2, DeltaInf: n, Mu: 1,
		Event: accountant.PoissonSampled{Q: float64(c.BatchSize) / n, Event: accountant.Gaussian{Sigma: c.Sigma}}}
	if err := want.Compose(ev, c.Steps); err != nil {
		t.Fatal(err)
	}
	wb, err := want.Epsilon(c.Delta)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(wb.Epsilon-s.Best.Epsilon) > 1e-9*wb.Epsilon {
		t.Fatalf("srdp ε %v, independent %v", s.Best.Epsilon, wb.Epsilon)
	}
	if !(s.Best.Epsilon > plain.Epsilon) {
		t.Fatalf("SRDP ε %v not above plain RDP %v", s.Best.Epsilon, plain.Epsilon)
	}
}

// Shuffling is charged one replace-one Gaussian (sensitivity 2C) per epoch
// started, at each epoch's first step.
func TestShuffleChargesOneGaussianPerEpoch(t *testing.T) {
	c := small(t)
	c.Sampler, c.Steps, c.Sigma = "shuffle", 60, 4
	s := run(t, c, Options{})
	perEpoch := s.TrainN / c.BatchSize
	epochs := (c.Steps + perEpoch - 1) / perEpoch
	want, err := accountant.NewRDP(accountant.WithRelation(accountant.ReplaceOne))
	if err != nil {
		t.Fatal(err)
	}
	if err := want.Compose(accountant.Gaussian{Sigma: c.Sigma / 2}, epochs); err != nil {
		t.Fatal(err)
	}
	wb, _ := want.Epsilon(c.Delta)
	if s.Best.Relation != accountant.ReplaceOne || math.Abs(s.Best.Epsilon-wb.Epsilon) > 1e-12 {
		t.Fatalf("shuffle bound %+v, want ε %v (replace-one, %d epochs)", s.Best, wb.Epsilon, epochs)
	}
	recs := mustMetrics(t, c.OutDir)
	for i := 1; i < len(recs); i++ {
		grew := recs[i].EpsilonBest > recs[i-1].EpsilonBest
		if first := (recs[i].Step-1)%perEpoch == 0; grew != first {
			t.Fatalf("step %d: ε grew=%v, epoch start=%v", recs[i].Step, grew, first)
		}
	}
}

// Subspace clipping: per-block noise of effective multiplier σ, accounted as
// the twice-sampling event of its blocks, matched by an independent account.
func TestSubspaceAccounting(t *testing.T) {
	c := small(t)
	c.Clip, c.SubspaceRanks, c.PublicN, c.Steps, c.Sigma = "subspace", []int{4, 8}, 50, 20, 1.5
	s := run(t, c, Options{})
	if s.TrainN != 5000-50 {
		t.Fatalf("private set has %d examples, want %d", s.TrainN, 5000-50)
	}
	st := &state{cfg: c}
	if err := st.setup(); err != nil {
		t.Fatal(err)
	}
	blocks := st.sub.blocks
	sig := st.blockSigmas(c.Sigma)
	var inv, total float64
	for j, b := range blocks {
		inv += b.C2 * b.C2 / (sig[j] * sig[j])
		total += float64(b.Dim) * sig[j] * sig[j]
	}
	if math.Abs(1/math.Sqrt(inv)-c.Sigma) > 1e-9 {
		t.Fatalf("effective multiplier %v, want σ = %v", 1/math.Sqrt(inv), c.Sigma)
	}
	if math.Abs(total-s.NoiseVariance) > 1e-6*total {
		t.Fatalf("noise variance %v, blocks give %v", s.NoiseVariance, total)
	}
	var c2sq float64
	for _, b := range blocks {
		c2sq += b.C2 * b.C2
	}
	if math.Abs(c2sq-c.ClipNorm*c.ClipNorm) > 1e-9 {
		t.Fatalf("Σ c2j² = %v, want C² = %v", c2sq, c.ClipNorm*c.ClipNorm)
	}
	want := accountant.NewTwice()
	for j := range blocks {
		blocks[j].Sigma = sig[j]
	}
	if err := want.Compose(accountant.TwiceSampled{Q1: float64(c.BatchSize) / float64(s.TrainN), Q2: 1, Blocks: blocks}, c.Steps); err != nil {
		t.Fatal(err)
	}
	wb, err := want.Epsilon(c.Delta)
	if err != nil {
		t.Fatal(err)
	}
	if s.Best.Accountant != "twice" || math.Abs(s.Best.Epsilon-wb.Epsilon) > 1e-12 {
		t.Fatalf("bound %+v, independent ε %v", s.Best, wb.Epsilon)
	}
}

// ScatterNet features feed a linear model; group normalisation is free,
// private channel statistics add their Gaussian to the account.
func TestScatterNetFeatures(t *testing.T) {
	base := small(t)
	base.Dataset, base.TrainLimit, base.TestLimit = "embedded", 300, 100
	base.Model, base.Features, base.FeatureCache = "logreg", "scatternet", t.TempDir()
	base.BatchSize, base.Steps, base.Sigma = 30, 5, 2
	group := run(t, base, Options{})
	if group.Params != 81*7*7*10+10 {
		t.Fatalf("logreg on 81×7×7 scattering features has %d parameters", group.Params)
	}
	want, err := accountant.PoissonEpsilon(float64(base.BatchSize)/300, base.Sigma, base.Steps, base.Delta)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(group.Epsilon["rdp"]-want.Epsilon) > 1e-12 {
		t.Fatalf("group normalisation changed ε: %v vs %v", group.Epsilon["rdp"], want.Epsilon)
	}
	cnn := base
	cnn.OutDir, cnn.Model = t.TempDir(), "scatcnn"
	if s := run(t, cnn, Options{}); s.Params != 64*81*9+64+64*64*9+64+64*3*3*10+10 {
		t.Fatalf("scatcnn on 81×7×7 features has %d parameters", s.Params)
	}
	priv := base
	priv.OutDir, priv.FeatureNorm = t.TempDir(), "private"
	p := run(t, priv, Options{})
	acc, _ := accountant.NewRDP()
	acc.Compose(accountant.Gaussian{Sigma: priv.FeatureNormSigma}, 1)
	acc.Compose(accountant.PoissonSampled{Q: float64(base.BatchSize) / 300, Event: accountant.Gaussian{Sigma: base.Sigma}}, base.Steps)
	wb, _ := acc.Epsilon(base.Delta)
	if math.Abs(p.Epsilon["rdp"]-wb.Epsilon) > 1e-12 {
		t.Fatalf("private normalisation: ε %v, independent composition %v", p.Epsilon["rdp"], wb.Epsilon)
	}
}

// Per-instance ε: an example clipped at every step gets exactly the run's ε,
// a smaller gradient a smaller ε, a zero gradient none; and the diagnostic
// survives an interrupted and resumed run bit for bit.
func TestPerInstance(t *testing.T) {
	const q, sigma, clip, delta, steps = 0.05, 1.2, 1.0, 1e-5, 40
	norms := make([][]float64, steps)
	for i := range norms {
		norms[i] = []float64{5, 0.5, 0, 1}
	}
	eps, err := instanceEpsilons(norms, q, sigma, clip, delta)
	if err != nil {
		t.Fatal(err)
	}
	run, err := accountant.PoissonEpsilon(q, sigma, steps, delta)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*b }
	if !near(eps[0], run.Epsilon) || !near(eps[3], run.Epsilon) {
		t.Fatalf("clipped examples: ε %v and %v, run's ε %v", eps[0], eps[3], run.Epsilon)
	}
	half, _ := accountant.PoissonEpsilon(q, 2*sigma, steps, delta) // c = C/2: multiplier 2σ
	if !near(eps[1], half.Epsilon) || !(eps[1] < eps[0]) || eps[2] != 0 {
		t.Fatalf("per-instance ε %v, want [run, %v, 0, run]", eps, half.Epsilon)
	}

	c := small(t)
	c.Model, c.PerInstance, c.Steps = "logreg", 20, 15
	full := run1(t, c)
	c2 := c
	c2.OutDir = t.TempDir()
	if _, err := Run(context.Background(), c2, Options{StopAfter: 6}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	resumed := run1(t, c2, Options{Resume: true})
	a := readFile(t, filepath.Join(c.OutDir, "per_instance.csv"))
	b := readFile(t, filepath.Join(c2.OutDir, "per_instance.csv"))
	if !bytes.Equal(a, b) || len(bytes.Split(bytes.TrimSpace(a), []byte("\n"))) != 21 {
		t.Fatalf("per-instance CSVs differ or have the wrong length:\n%s\n%s", a, b)
	}
	if !strings.Contains(strings.Join(full.Notes, "\n"), "DIAGNOSTIC") || len(resumed.Notes) != len(full.Notes) {
		t.Fatalf("notes %v", full.Notes)
	}
}

func run1(t *testing.T, c Config, o ...Options) *Summary {
	t.Helper()
	var opts Options
	if len(o) > 0 {
		opts = o[0]
	}
	return run(t, c, opts)
}
