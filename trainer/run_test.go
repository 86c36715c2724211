package trainer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/dptrain/dptrain/mechanism"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/optim"
	"github.com/dptrain/dptrain/preprocess"
	"github.com/dptrain/dptrain/rng"
)

// small is a fast configuration on the synthetic Gaussian mixture, seeded
// (reproducible) so that runs can be compared.
func small(t *testing.T) Config {
	c := Default()
	c.Seeded = true
	c.Dataset, c.Model, c.Hidden = "synthetic", "mlp", []int{16}
	c.BatchSize, c.Steps, c.Epsilon, c.Sigma = 200, 30, 0, 1.0
	c.Optimizer, c.LR, c.Momentum, c.ClipNorm = "momentum", 1, 0.5, 1
	c.EvalEvery, c.CheckpointEvery, c.Plots = 10, 7, false
	// The tests compare raw per-step statistics and the final checkpoint.
	c.PrivateDiagnostics, c.KeepCheckpoint = true, true
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
	for _, sampler := range []string{"poisson", "twice", "shuffle", "subspace", "ema"} {
		t.Run(sampler, func(t *testing.T) {
			c := small(t)
			c.Sampler = mechanism.Sampler(sampler)
			switch sampler {
			case "twice":
				c.Q2, c.Clip, c.D0 = 0.5, "hybrid", 4
			case "ema":
				// The parameter average travels in the checkpoint (written at
				// step 7 and at the stop at 12); evaluation and model.bin use it.
				c.Sampler, c.EMA = "poisson", 0.9
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

			if full.Epsilon[full.Best.Accountant] != resumed.Epsilon[resumed.Best.Accountant] || full.TestLoss != resumed.TestLoss || full.Samples != resumed.Samples {
				t.Fatalf("resumed run differs: ε %v vs %v, loss %v vs %v, samples %d vs %d", full.Epsilon, resumed.Epsilon, full.TestLoss, resumed.TestLoss, full.Samples, resumed.Samples)
			}
			if !bytes.Equal(readFile(t, filepath.Join(c.OutDir, "release", "model.bin")), readFile(t, filepath.Join(c2.OutDir, "release", "model.bin"))) {
				t.Fatal("final models differ")
			}
			a, b := mustMetrics(t, c.OutDir), mustMetrics(t, c2.OutDir)
			if len(a) != c.Steps || len(b) != c.Steps {
				t.Fatalf("metrics have %d and %d records, want %d", len(a), len(b), c.Steps)
			}
			for i := range a {
				if a[i].Loss != b[i].Loss || a[i].EpsilonBest != b[i].EpsilonBest || a[i].BatchSize != b[i].BatchSize ||
					(a[i].TestLoss == nil) != (b[i].TestLoss == nil) || a[i].TestLoss != nil && *a[i].TestLoss != *b[i].TestLoss {
					t.Fatalf("step %d differs: %+v vs %+v", i+1, a[i], b[i])
				}
			}
			if c.EMA > 0 && !bytes.Equal(mustFeature[emaCheckpoint](t, mustCheckpoint(t, c.OutDir), featureEMA).State, mustFeature[emaCheckpoint](t, mustCheckpoint(t, c2.OutDir), featureEMA).State) {
				t.Fatal("final parameter averages differ")
			}
		})
	}
}

func mustMetrics(t *testing.T, dir string) []Record {
	t.Helper()
	r, err := ReadMetrics(filepath.Join(dir, "private", "diagnostics.jsonl"))
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
	// The PLD accountant runs beside RDP and is the tighter: the result.
	pld, err := accountant.PLDPoissonEpsilon(float64(c.BatchSize)/float64(s.TrainN), c.Sigma, c.Steps, c.Delta)
	if err != nil {
		t.Fatal(err)
	}
	if s.Best.Accountant != "pld" || s.Best.Relation != accountant.AddRemove || s.Best.Epsilon != pld.Epsilon || !(pld.Epsilon <= want.Epsilon) {
		t.Fatalf("best %+v, want pld %v (rdp %v)", s.Best, pld.Epsilon, want.Epsilon)
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
	// Poisson batches and the outer clip: the bound holds add/remove, so
	// the run's bound is the smaller of it and RDP.
	if hidden == nil || !hidden.Applicable || hidden.Relation != accountant.AddRemove {
		t.Fatalf("hidden bound missing or not applicable: %+v", hidden)
	}
	if want := math.Min(hidden.Epsilon, math.Min(s.Epsilon["rdp"], s.Epsilon["pld"])); s.Best.Epsilon != want || s.Best.Relation != accountant.AddRemove {
		t.Fatalf("best bound %+v, want min(hidden %v, rdp %v, pld %v)", s.Best, hidden.Epsilon, s.Epsilon["rdp"], s.Epsilon["pld"])
	}
	ck := readFile(t, filepath.Join(c.OutDir, "private", "checkpoint.json"))
	if !bytes.Contains(ck, []byte(`"private":true`)) {
		t.Fatal("hidden-state checkpoint not marked private")
	}
	// Interrupted, the run releases no intermediate iterate: no model.bin,
	// a private checkpoint that says so; resumed, the final model appears
	// and is the uninterrupted run's.
	c2 := c
	c2.OutDir = t.TempDir()
	stopped, err := Run(context.Background(), c2, Options{StopAfter: 7})
	if !errors.Is(err, ErrInterrupted) || !stopped.Private {
		t.Fatalf("stop: %v, summary private %v", err, stopped != nil && stopped.Private)
	}
	if _, err := os.Stat(filepath.Join(c2.OutDir, "release", "model.bin")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("interrupted final_only run wrote model.bin (%v)", err)
	}
	if ck := mustCheckpoint(t, c2.OutDir); !ck.Private || !strings.Contains(ck.Warning, "voids the hidden-state bound") || ck.Step != 7 {
		t.Fatalf("interrupted checkpoint: private %v, step %d, warning %q", ck.Private, ck.Step, ck.Warning)
	}
	run(t, c2, Options{Resume: true})
	if !bytes.Equal(readFile(t, filepath.Join(c.OutDir, "release", "model.bin")), readFile(t, filepath.Join(c2.OutDir, "release", "model.bin"))) {
		t.Fatal("resumed final_only run released another model")
	}

	c = small(t)
	c.Radius = 5
	s = run(t, c, Options{})
	for _, b := range s.Bounds {
		if b.Name == "hidden" && (b.Applicable || b.Reason == "") {
			t.Fatalf("hidden bound applicable with momentum: %+v", b)
		}
	}

	// Subspace clipping under Poisson sampling, otherwise qualifying: its
	// per-block noise forbids the (L2-only) outer clip, so the expected-batch
	// divisor breaks A3 and the bound must not apply.
	c = small(t)
	c.Optimizer, c.Momentum, c.Radius, c.FinalOnly = "sgd", 0, 5, true
	c.Clip, c.SubspaceRanks, c.PublicN, c.Steps = "subspace", []int{4, 8}, 50, 5
	s = run(t, c, Options{})
	found := false
	for _, b := range s.Bounds {
		if b.Name == "hidden" {
			found = true
			if b.Applicable || !strings.Contains(b.Reason, "expected batch") {
				t.Fatalf("hidden bound with subspace clipping: %+v", b)
			}
		}
	}
	if !found {
		t.Fatal("subspace run lists no hidden-state bound")
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
		{"cnn on vectors", func(c *Config) { c.Model = "cnn" }, "use --model logreg or mlp for tables"},
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
	tests := []struct {
		name        string
		first, then func(*Config)
	}{
		{"lr", func(*Config) {}, func(c *Config) { c.LR = 0.1 }},
		// A checkpoint without a parameter average cannot continue one, and
		// one with an average cannot be continued without it or with another d.
		{"ema added", func(*Config) {}, func(c *Config) { c.EMA = 0.9 }},
		{"ema removed", func(c *Config) { c.EMA = 0.9 }, func(c *Config) { c.EMA = 0 }},
		{"ema changed", func(c *Config) { c.EMA = 0.9 }, func(c *Config) { c.EMA = 0.99 }},
	}
	for _, tc := range tests {
		c := small(t)
		c.Model = "logreg"
		tc.first(&c)
		if _, err := Run(context.Background(), c, Options{StopAfter: 3}); !errors.Is(err, ErrInterrupted) {
			t.Fatal(err)
		}
		tc.then(&c)
		key := strings.Fields(tc.name)[0] + ":" // the setting is named
		if _, err := Run(context.Background(), c, Options{Resume: true}); err == nil || !strings.Contains(err.Error(), "different settings") || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: resume: %v", tc.name, err)
		}
	}
}

func mustCheckpoint(t *testing.T, dir string) *checkpoint {
	t.Helper()
	ck, err := loadCheckpoint(filepath.Join(dir, "private", "checkpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	return ck
}

// checkpointParamsDiff is the largest parameter difference between the
// checkpoints of two runs and the largest |parameter| of the reference run
// ref (the scale the difference is judged against).
func checkpointParamsDiff(t *testing.T, dir, ref string) (maxDiff, maxAbs float64) {
	t.Helper()
	pa, pr := mustCheckpoint(t, dir), mustCheckpoint(t, ref)
	a, r := make([]float32, len(pa.Params)/4), make([]float32, len(pr.Params)/4)
	setFloat32s(a, pa.Params)
	setFloat32s(r, pr.Params)
	if len(a) != len(r) {
		t.Fatalf("checkpoints hold %d and %d parameters", len(a), len(r))
	}
	for i := range a {
		maxDiff = math.Max(maxDiff, math.Abs(float64(a[i]-r[i])))
		maxAbs = math.Max(maxAbs, math.Abs(float64(r[i])))
	}
	return maxDiff, maxAbs
}

// The saved parameter average is a_t = d_t·a_{t−1} + (1−d_t)·θ_t with
// d_t = min(d, (1+t)/(10+t)) and a₀ = θ₀, applied by hand to the iterates
// the run recorded (θ₀ from the same setup, θ_t from the checkpoint after
// step t); evaluation, the summary and model.bin use a_T rounded to float32.
func TestEMAFollowsTheRecursion(t *testing.T) {
	base := small(t)
	base.Model, base.Steps, base.CheckpointEvery, base.EvalEvery = "logreg", 3, 1, 1
	st := &state{cfg: base}
	if err := st.setup(); err != nil {
		t.Fatal(err)
	}
	theta := [][]float32{append([]float32(nil), st.model.Params()...)} // θ₀
	// d = 0.2 is below the warm-up decay from t = 2 on (3/12 > 0.2): d₁ = 2/11,
	// then 0.2; d = 0.9 stays in the warm-up (2/11, 3/12, 4/13).
	for _, tc := range []struct {
		d      float64
		decays []float64
	}{{0.2, []float64{2. / 11, 0.2, 0.2}}, {0.9, []float64{2. / 11, 3. / 12, 4. / 13}}} {
		var avgs [][]float64
		for stop := 1; stop <= base.Steps; stop++ {
			c := base
			c.OutDir, c.EMA = t.TempDir(), tc.d
			sum, err := Run(context.Background(), c, Options{StopAfter: stop})
			if stop < c.Steps && !errors.Is(err, ErrInterrupted) || stop == c.Steps && err != nil {
				t.Fatalf("d=%v stop %d: %v", tc.d, stop, err)
			}
			ck := mustCheckpoint(t, c.OutDir)
			iterate := make([]float32, len(theta[0]))
			if err := setFloat32s(iterate, ck.Params); err != nil {
				t.Fatal(err)
			}
			if len(theta) <= stop {
				theta = append(theta, iterate)
			} else if !slices.Equal(theta[stop], iterate) {
				t.Fatalf("d=%v: iterate %d differs from the other run's: the average changed training", tc.d, stop)
			}
			e, _ := optim.NewEMA(tc.d, theta[0])
			if err := e.UnmarshalBinary(mustFeature[emaCheckpoint](t, ck, featureEMA).State); err != nil || e.Steps() != stop {
				t.Fatalf("d=%v: checkpoint ema after %d steps: %v (t=%d)", tc.d, stop, err, e.Steps())
			}
			avgs = append(avgs, e.Average())
			if stop == c.Steps {
				checkReleased(t, st, c, sum, e.Average())
			}
		}
		a := make([]float64, len(theta[0]))
		for i, p := range theta[0] {
			a[i] = float64(p)
		}
		for step := 1; step <= base.Steps; step++ {
			d := tc.decays[step-1]
			for i, p := range theta[step] {
				a[i] = float64(d*a[i]) + float64((1-d)*float64(p))
			}
			for i := range a {
				if math.Float64bits(a[i]) != math.Float64bits(avgs[step-1][i]) {
					t.Fatalf("d=%v step %d: saved a[%d] = %.17g, by hand %.17g", tc.d, step, i, avgs[step-1][i], a[i])
				}
			}
		}
	}
}

// checkReleased checks that the run's test figures and model.bin are those
// of the average avg rounded to float32, evaluated in st's model.
func checkReleased(t *testing.T, st *state, c Config, sum *Summary, avg []float64) {
	t.Helper()
	p := st.model.Params()
	for i, a := range avg {
		p[i] = float32(a)
	}
	acc, loss, err := st.evaluate(st.data.test, st.data.test.N())
	if err != nil {
		t.Fatal(err)
	}
	if sum.TestAcc != acc || sum.TestLoss != loss {
		t.Fatalf("summary test acc %v loss %v, the average gives %v %v", sum.TestAcc, sum.TestLoss, acc, loss)
	}
	recs := mustMetrics(t, c.OutDir)
	if last := recs[len(recs)-1]; last.TestLoss == nil || *last.TestLoss != loss {
		t.Fatalf("last metrics record %+v: test loss is not the average's %v", last, loss)
	}
	var buf bytes.Buffer
	if err := st.describeModel(st.model.(*models.Net)); err != nil {
		t.Fatal(err)
	}
	if err := st.model.(interface{ Save(io.Writer) error }).Save(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), readFile(t, filepath.Join(c.OutDir, "release", "model.bin"))) {
		t.Fatal("model.bin is not the averaged parameters")
	}
	if !strings.Contains(strings.Join(sum.Notes, "\n"), fmt.Sprintf("EMA d = %g: evaluation and model.bin use the averaged parameters", c.EMA)) {
		t.Fatalf("notes %q lack the EMA line", sum.Notes)
	}
}

// With ema 0 (the default, and what every config written before the field
// existed decodes to) nothing changes: the config hash and checkpoint carry
// no ema key, so earlier checkpoints still resume. With ema on, training is
// untouched: every step's loss, batch, ε and the final iterate are those of
// the run without it; only the released parameters and test figures differ.
func TestEMALeavesTrainingUnchanged(t *testing.T) {
	off := small(t)
	off.Model, off.Steps, off.CheckpointEvery = "logreg", 12, 6
	fromJSON, err := ParseConfig([]byte(`{"ema":0}`), off)
	if err != nil || fromJSON.Hash() != off.Hash() {
		t.Fatalf("explicit ema 0: %v, hash %s vs %s", err, fromJSON.Hash(), off.Hash())
	}
	offSum := run(t, off, Options{})
	ckOff := readFile(t, filepath.Join(off.OutDir, "private", "checkpoint.json"))
	summ := readFile(t, filepath.Join(off.OutDir, "release", "summary.json"))
	if bytes.Contains(ckOff, []byte(`"ema"`)) || bytes.Contains(summ, []byte(`"ema"`)) {
		t.Fatal("a run without ema writes an ema key: older checkpoints and configs would no longer match")
	}
	for _, n := range offSum.Notes {
		if strings.Contains(n, "EMA") {
			t.Fatalf("note %q without ema", n)
		}
	}
	on := off
	on.OutDir, on.EMA = t.TempDir(), 0.5
	onSum := run(t, on, Options{})
	a, b := mustMetrics(t, off.OutDir), mustMetrics(t, on.OutDir)
	for i := range a {
		if a[i].Loss != b[i].Loss || a[i].BatchSize != b[i].BatchSize || a[i].EpsilonBest != b[i].EpsilonBest || a[i].GradNormMean != b[i].GradNormMean {
			t.Fatalf("step %d: training differs with ema: %+v vs %+v", i+1, a[i], b[i])
		}
	}
	if !bytes.Equal(mustCheckpoint(t, off.OutDir).Params, mustCheckpoint(t, on.OutDir).Params) {
		t.Fatal("final iterates differ with ema")
	}
	if onSum.Best != offSum.Best {
		t.Fatalf("ε differs with ema: %+v vs %+v", onSum.Best, offSum.Best)
	}
	if onSum.TestLoss == offSum.TestLoss || bytes.Equal(readFile(t, filepath.Join(off.OutDir, "release", "model.bin")), readFile(t, filepath.Join(on.OutDir, "release", "model.bin"))) {
		t.Fatal("ema on releases the same model as ema off")
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
	if _, err := os.Stat(filepath.Join(c.OutDir, "private", "checkpoint.json")); err != nil {
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
	if s.CoveredN != 5000-50 || s.TrainN != 5000 || !strings.Contains(s.Claim, "other than the 50 carved out as public") {
		t.Fatalf("claim covers %d of %d examples, want %d of 5000: %q", s.CoveredN, s.TrainN, 5000-50, s.Claim)
	}
	st := &state{cfg: c}
	if err := st.setup(); err != nil {
		t.Fatal(err)
	}
	ev, ok := st.acct.mech.Event(c.Sigma).(accountant.TwiceSampled)
	if !ok {
		t.Fatalf("event %T, want TwiceSampled", st.acct.mech.Event(c.Sigma))
	}
	blocks := ev.Blocks
	sig := make([]float64, len(blocks))
	for j, b := range blocks {
		sig[j] = b.Sigma
	}
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
	if err := want.Compose(accountant.TwiceSampled{Q1: float64(c.BatchSize) / float64(s.CoveredN), Q2: 1, Blocks: blocks}, c.Steps); err != nil {
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
	a := readFile(t, filepath.Join(c.OutDir, "private", "per_instance.csv"))
	b := readFile(t, filepath.Join(c2.OutDir, "private", "per_instance.csv"))
	if !bytes.Equal(a, b) || len(bytes.Split(bytes.TrimSpace(a), []byte("\n"))) != 21 {
		t.Fatalf("per-instance CSVs differ or have the wrong length:\n%s\n%s", a, b)
	}
	if _, err := png.Decode(bytes.NewReader(readFile(t, filepath.Join(c.OutDir, "private", "per_instance.png")))); err != nil {
		t.Fatalf("per_instance.png: %v", err)
	}
	if !strings.Contains(strings.Join(full.PrivateNotes, "\n"), "DIAGNOSTIC") || len(resumed.PrivateNotes) != len(full.PrivateNotes) {
		t.Fatalf("notes %v", full.PrivateNotes)
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

// setCryptoRoot makes the "crypto/rand" root of unseeded runs the seeded
// stream of seed until the test ends, so that two runs can share it.
func setCryptoRoot(t *testing.T, seed uint64) {
	t.Helper()
	old := newCryptoRoot
	newCryptoRoot = func() (*rng.Stream, error) { return rng.New(seed), nil }
	t.Cleanup(func() { newCryptoRoot = old })
}

// An unseeded run keeps its crypto root in the checkpoint: resumed, it
// continues the same streams (sampler, noise, the DPSGD-F private mean, the
// subspace basis refreshes) instead of drawing a new root, and ends bit for
// bit where the uninterrupted run with that root ends. The resumed run is
// offered a different root, which it must not use.
func TestResumeKeepsCryptoRoot(t *testing.T) {
	for _, name := range []string{"poisson", "dpsgdf", "subspace"} {
		t.Run(name, func(t *testing.T) {
			c := small(t)
			c.Seeded = false
			switch name {
			case "dpsgdf":
				c.Model, c.DPSGDF, c.FeatureEps, c.FeatureCF = "logreg", true, 0.1, 10
			case "subspace":
				c.Sampler, c.Q2, c.Clip, c.SubspaceRanks, c.PublicN, c.SubspaceRefresh = "twice", 0.5, "subspace", []int{4, 8}, 50, 10
			}
			setCryptoRoot(t, 1001)
			full := run(t, c, Options{})
			if full.NoiseSeeded {
				t.Fatal("unseeded run reported as seeded")
			}
			c2 := c
			c2.OutDir = t.TempDir()
			if _, err := Run(context.Background(), c2, Options{StopAfter: 12}); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("stop: %v", err)
			}
			ck := mustCheckpoint(t, c2.OutDir)
			want, _ := rng.New(1001).MarshalBinary()
			if !bytes.Equal(ck.Root, want) || !strings.Contains(ck.Warning, "SECRET") || ck.Private {
				t.Fatalf("checkpoint root %x (want %x), warning %q, private %v", ck.Root[:8], want[:8], ck.Warning, ck.Private)
			}
			if fi, err := os.Stat(filepath.Join(c2.OutDir, "private", "checkpoint.json")); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("checkpoint mode %v (%v), want 0600", fi.Mode().Perm(), err)
			}
			setCryptoRoot(t, 2002)
			run(t, c2, Options{Resume: true})
			if !bytes.Equal(readFile(t, filepath.Join(c.OutDir, "release", "model.bin")), readFile(t, filepath.Join(c2.OutDir, "release", "model.bin"))) {
				t.Fatal("resumed model differs from the uninterrupted run with the same root")
			}
			a, b := mustMetrics(t, c.OutDir), mustMetrics(t, c2.OutDir)
			for i := range a {
				if a[i].Loss != b[i].Loss || a[i].BatchSize != b[i].BatchSize || a[i].EpsilonBest != b[i].EpsilonBest {
					t.Fatalf("step %d differs: %+v vs %+v", i+1, a[i], b[i])
				}
			}
		})
	}
}

// By default the noise and sampling do not follow the seed: two default
// runs differ, and neither equals the seeded run of the same seed, which is
// reproducible and says so.
func TestDefaultNoiseIsNotSeeded(t *testing.T) {
	if Default().Seeded {
		t.Fatal("Default() seeds the DP noise from a fixed seed")
	}
	released := map[string][]byte{}
	for _, name := range []string{"crypto-a", "crypto-b", "seeded-a", "seeded-b"} {
		c := small(t)
		c.Model, c.Steps, c.CheckpointEvery = "logreg", 5, 0
		c.Seeded = strings.HasPrefix(name, "seeded")
		s := run(t, c, Options{})
		if s.NoiseSeeded != c.Seeded {
			t.Fatalf("%s: summary noise_seeded %v", name, s.NoiseSeeded)
		}
		released[name] = readFile(t, filepath.Join(c.OutDir, "release", "model.bin"))
	}
	if !bytes.Equal(released["seeded-a"], released["seeded-b"]) {
		t.Fatal("two seeded runs differ")
	}
	for _, pair := range [][2]string{{"crypto-a", "crypto-b"}, {"crypto-a", "seeded-a"}, {"crypto-b", "seeded-a"}} {
		if bytes.Equal(released[pair[0]], released[pair[1]]) {
			t.Fatalf("%s and %s released the same model: the noise followed the seed", pair[0], pair[1])
		}
	}
}

// A checkpoint without the root seed cannot resume an unseeded run: the
// private preprocessing and basis streams would be drawn afresh.
func TestResumeRefusesCheckpointWithoutRoot(t *testing.T) {
	c := small(t)
	c.Model, c.Seeded = "logreg", false
	if _, err := Run(context.Background(), c, Options{StopAfter: 3}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	ck := mustCheckpoint(t, c.OutDir)
	ck.Root = nil
	if err := saveCheckpoint(filepath.Join(c.OutDir, "private", "checkpoint.json"), ck); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), c, Options{Resume: true}); err == nil || !strings.Contains(err.Error(), "holds no root seed") {
		t.Fatalf("resume: %v", err)
	}
}

// Evaluation steps record the training accuracy of the model on the first
// min(train N, test N) training examples, as counted one example at a time.
func TestTrainAccuracyRecorded(t *testing.T) {
	c := small(t)
	c.Steps, c.EvalEvery, c.CheckpointEvery = 28, 10, 28 // the last checkpoint holds the final model
	run(t, c, Options{})
	recs := mustMetrics(t, c.OutDir)
	for _, r := range recs {
		if want := r.Step%10 == 0 || r.Step == c.Steps; (r.TrainAcc != nil) != want || (r.TestAcc != nil) != want {
			t.Fatalf("step %d: train acc %v, test acc %v; want both on evaluation steps only", r.Step, r.TrainAcc, r.TestAcc)
		}
	}
	st := &state{cfg: c}
	if err := st.setup(); err != nil {
		t.Fatal(err)
	}
	if err := setFloat32s(st.model.Params(), mustCheckpoint(t, c.OutDir).Params); err != nil {
		t.Fatal(err)
	}
	st.model.SetTraining(false)
	n, in := st.data.test.N(), st.model.InputSize()
	x, y := make([]float32, in), make([]int, 1)
	correct := 0
	for i := 0; i < n; i++ {
		st.data.train.Gather([]int{i}, x, y)
		_, c1, err := st.model.Evaluate(models.Batch{X: x, Y: y, N: 1})
		if err != nil {
			t.Fatal(err)
		}
		correct += c1
	}
	if got, want := *recs[len(recs)-1].TrainAcc, float64(correct)/float64(n); got != want || n >= st.data.train.N() {
		t.Fatalf("final train accuracy %v, counted %v over %d of %d training examples", got, want, n, st.data.train.N())
	}
}

// With the hidden-state accountant running, no step moves the parameters by
// more than ηC before the noise, even when a Poisson batch is larger than
// expected (docs/hidden-state.md#the-outer-clip); without it, such steps do.
func TestHiddenStateOuterClip(t *testing.T) {
	base := small(t)
	base.Model, base.Optimizer, base.Momentum, base.FinalOnly = "logreg", "sgd", 0, true
	// Tiny clip and an expected batch of 2: every example is clipped, and a
	// batch of 4 or 5 sums to more than 2C unless the outer clip acts.
	base.BatchSize, base.Sigma, base.LR, base.ClipNorm, base.Steps = 2, 1e-9, 1, 1e-3, 12
	base.CheckpointEvery, base.EvalEvery = 1, 0
	maxMove := func(radius float64) float64 {
		c := base
		c.Radius = radius
		st := &state{cfg: c}
		if err := st.setup(); err != nil {
			t.Fatal(err)
		}
		prev := append([]float32(nil), st.model.Params()...)
		var worst float64
		for stop := 1; stop <= c.Steps; stop++ {
			c.OutDir = t.TempDir()
			if _, err := Run(context.Background(), c, Options{StopAfter: stop}); err != nil && !errors.Is(err, ErrInterrupted) {
				t.Fatal(err)
			}
			cur := make([]float32, len(prev))
			if err := setFloat32s(cur, mustCheckpoint(t, c.OutDir).Params); err != nil {
				t.Fatal(err)
			}
			var ss float64
			for i := range cur {
				d := float64(cur[i]) - float64(prev[i])
				ss += d * d
			}
			worst = math.Max(worst, math.Sqrt(ss))
			prev = cur
		}
		return worst / (base.LR * base.ClipNorm)
	}
	clipped, control := maxMove(1e6), maxMove(0)
	t.Logf("largest step: %.6f·ηC with the outer clip, %.6f·ηC without", clipped, control)
	if clipped > 1+1e-4 {
		t.Errorf("hidden-state run: a step moved %.6f·ηC (> ηC)", clipped)
	}
	if control < 1.05 {
		t.Errorf("control run without the outer clip moved at most %.6f·ηC: the test cannot see a violation", control)
	}
}

// Private preprocessing declares its Gaussian multipliers against the
// add/remove sensitivity; a shuffled run is accounted under replace-one,
// where the same noise covers twice the sensitivity: the prefix must carry
// half the multiplier there, and the unchanged one under Poisson.
func TestPrivatePreprocessingRelation(t *testing.T) {
	sigmaF, err := preprocess.GaussianMean{EpsF: 0.1, Delta: 1e-5, CF: 10}.Sigma()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sampler mechanism.Sampler
		want    float64
	}{{mechanism.Poisson, sigmaF}, {mechanism.Shuffle, sigmaF / 2}} {
		c := small(t)
		c.Model, c.Sampler, c.DPSGDF, c.FeatureEps, c.FeatureCF, c.Delta = "logreg", tc.sampler, true, 0.1, 10, 1e-5
		st := &state{cfg: c}
		if err := st.setup(); err != nil {
			t.Fatal(err)
		}
		if len(st.acct.prefix) != 1 {
			t.Fatalf("%s: prefix %v", tc.sampler, st.acct.prefix)
		}
		g, ok := st.acct.prefix[0].(accountant.Gaussian)
		if !ok || math.Abs(g.Sigma-tc.want) > 1e-12*tc.want {
			t.Errorf("%s: prefix %#v, want Gaussian{%v}", tc.sampler, st.acct.prefix[0], tc.want)
		}
	}
}

// DPSGD-F's theory variant (Algorithm 2): its private mean and quantile
// join the account before the steps (σ is calibrated for what is left),
// the model sees d+1 features ((x − μ̂, τ), clipped to √2τ), and the run
// stays within its ε.
func TestDPSGDFTheoryVariant(t *testing.T) {
	c := small(t)
	c.Model, c.Steps, c.Sigma, c.Epsilon = "logreg", 20, 0, 3
	plain := run(t, c, Options{})
	c.OutDir = t.TempDir()
	c.DPSGDF, c.DPSGDFVariant, c.FeatureCF = true, "theory", 20
	st := &state{cfg: c}
	if err := st.setup(); err != nil {
		t.Fatal(err)
	}
	d := st.data.train.Dim()
	if len(st.acct.prefix) != 2 {
		t.Fatalf("prefix %v, want the mean's and the quantile's events", st.acct.prefix)
	}
	if tau := st.data.train.X[d-1]; !(tau > 0) {
		t.Fatalf("last feature %v, want τ > 0", tau)
	}
	for i := 0; i < st.data.train.N(); i++ {
		x := st.data.train.X[i*d : (i+1)*d]
		tau := float64(st.data.train.X[d-1])
		if n := math.Sqrt(clipSumSquares(x)); n > math.Sqrt2*tau*(1+1e-6) {
			t.Fatalf("record %d has norm %v > √2τ = %v", i, n, math.Sqrt2*tau)
		}
	}
	s := run(t, c, Options{})
	// σ is calibrated by the PLD accountant (the prefix Gaussians included).
	if !(s.Epsilon["pld"] <= 3) || s.Best.Accountant != "pld" || !(s.Sigma > plain.Sigma) {
		t.Fatalf("theory run: ε %v (%s), σ %v (without DPSGD-F: σ %v); want pld ε ≤ 3 and more noise", s.Best.Epsilon, s.Best.Accountant, s.Sigma, plain.Sigma)
	}
	for _, bad := range []func(*Config){
		func(c *Config) { c.DPSGDFVariant = "exact" },
		func(c *Config) { c.FeatureEps = 0.1 },
		func(c *Config) { c.FeatureCF = 0 },
		func(c *Config) { c.DPSGDF = false },
	} {
		b := c
		bad(&b)
		if err := b.Validate(); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %+v accepted: %v", b, err)
		}
	}
}

func clipSumSquares(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return s
}
