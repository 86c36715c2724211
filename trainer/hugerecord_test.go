package trainer

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dptrain/dptrain/models"
)

// hugeCase is one configuration the neighbouring-dataset test runs.
type hugeCase struct {
	name string
	set  func(c *Config)
}

// hugeCases are the model × gradient strategy combinations Validate accepts
// on a CSV table: the norm-only path (flat, per-layer, quantile clipping;
// poisson and shuffle sampling; final-only), the factored and layered paths
// (hybrid clipping), materialised gradients and lattice noise.
func hugeCases() []hugeCase {
	var cs []hugeCase
	for _, m := range []struct {
		model  Model
		hidden []int
	}{{"logreg", nil}, {"mlp", []int{8}}} {
		model := func(c *Config) { c.Model, c.Hidden = m.model, m.hidden }
		for _, s := range []hugeCase{
			{"norm-only flat", func(c *Config) {}},
			{"norm-only per-layer", func(c *Config) { c.Clip = "per-layer" }},
			{"norm-only quantile", func(c *Config) { c.ClipQuantile = 0.5 }},
			{"norm-only shuffle", func(c *Config) { c.Sampler = "shuffle" }},
			{"norm-only final-only", func(c *Config) { c.FinalOnly, c.Optimizer, c.Momentum, c.Radius = true, "sgd", 0, 5 }},
			{"hybrid (factored/layered)", func(c *Config) { c.Clip = "hybrid" }},
			{"twice factored/layered", func(c *Config) { c.Sampler, c.Q2 = "twice", 0.5 }},
			{"twice materialised", func(c *Config) { c.Sampler, c.Q2, c.PrivateDiagnostics = "twice", 0.5, true }},
			{"linf materialised", func(c *Config) { c.Clip = "linf" }},
			{"lattice", func(c *Config) { c.Noise = NoiseLattice }},
		} {
			cs = append(cs, hugeCase{string(m.model) + "/" + s.name, func(c *Config) { model(c); s.set(c) }})
		}
	}
	return cs
}

// releasedOutputs lists the run's released files and reads model.bin's parameters.
func releasedOutputs(t *testing.T, dir string) ([]string, []float32) {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	f, err := os.Open(filepath.Join(dir, "release", "model.bin"))
	if err != nil {
		return names, nil
	}
	defer f.Close()
	pf, err := models.ReadParams(f, 1<<20)
	if err != nil {
		t.Fatalf("model.bin: %v", err)
	}
	return names, pf.Params
}

// A dropped example contributes exactly nothing (issue 37, HIGH 1): for
// every strategy, the run on a dataset with one extreme finite record added
// completes as the run without it does, its released parameters are finite,
// and it releases the same files with the same number of records. The
// records do not cancel: all-positive 3e38 overflows the logits, and the
// mixed one overflows the MLP's hidden layer to ±Inf.
func TestHugeRecordDoesNotStopTheRun(t *testing.T) {
	records := map[string]string{
		"positive": "3e38,3e38,1",
		"mixed":    "3e38,-1e38,0",
	}
	base := twoClassRows(40, [2]string{"0", "1"})
	test := twoClassRows(10, [2]string{"0", "1"})
	type outcome struct {
		files  []string
		params []float32
		steps  int
		recs   int // release/metrics.jsonl's records
	}
	for _, tc := range hugeCases() {
		if f := os.Getenv("HUGE_CASE"); f != "" && f != tc.name {
			continue
		}
		run := func(train []string) (outcome, error) {
			c := csvRun(t, train, test)
			c.BatchSize, c.Steps, c.EvalEvery = 30, 4, 2
			c.PrivateDiagnostics = false
			tc.set(&c)
			s, err := Run(context.Background(), c, Options{})
			if err != nil {
				return outcome{}, err
			}
			files, params := releasedOutputs(t, c.OutDir)
			recs, err := ReadMetrics(filepath.Join(c.OutDir, "release", "metrics.jsonl"))
			if err != nil {
				return outcome{}, err
			}
			return outcome{files, params, s.Steps, len(recs)}, nil
		}
		without, err := run(base)
		if err != nil {
			t.Errorf("%s: the run without the record: %v", tc.name, err)
			continue
		}
		for _, rname := range []string{"positive", "mixed"} {
			name := fmt.Sprintf("%s with the %s record", tc.name, rname)
			with, err := run(append(slices.Clone(base), records[rname]))
			if err != nil {
				t.Errorf("%s: the run failed: %v", name, err)
				continue
			}
			if !slices.Equal(with.files, without.files) || with.steps != without.steps || with.recs != without.recs {
				t.Errorf("%s: released %v (%d steps, %d metrics records) with the record, %v (%d, %d) without",
					name, with.files, with.steps, with.recs, without.files, without.steps, without.recs)
			}
			if len(with.params) == 0 {
				t.Errorf("%s: no released parameters", name)
			}
			for _, v := range with.params {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Errorf("%s: released parameter %v", name, v)
					break
				}
			}
		}
	}
}

// One chunk's clipped sum with a dropped example (its features set to 3e38,
// or +Inf for the CNN, whose normalisation keeps 3e38 finite: a stand-in
// for a hidden layer that overflows; last in the chunk) equals the sum
// without it: the dropped example contributes nothing, on every gradient
// strategy, for the zoo's image models too (a few embedded images). The
// norm-only path recomputes the kept examples as their own chunk, so its
// sum is the same bit for bit; elsewhere the forward GEMM rounds a row
// differently with the chunk's size, so the sums agree to float rounding.
func TestDroppedExampleAddsNothing(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		name, strategy string
		poison         float32
		exact          bool
		set            func(c *Config)
	}{
		{"mlp flat", "*trainer.normOnlyGradients", 3e38, true, func(c *Config) {}},
		{"mlp per-layer", "*trainer.normOnlyGradients", 3e38, true, func(c *Config) { c.Clip = "per-layer" }},
		{"mlp hybrid", "trainer.factoredGradients", 3e38, false, func(c *Config) { c.Clip = "hybrid" }},
		{"mlp linf", "trainer.materialisedGradients", 3e38, false, func(c *Config) { c.Clip = "linf" }},
		{"mlp augmult", "trainer.augmultGradients", 3e38, false, func(c *Config) { c.Augmult = 2 }},
		{"cnn flat", "*trainer.normOnlyGradients", inf, true, func(c *Config) { c.Model = "cnn" }},
		{"cnn per-layer", "*trainer.normOnlyGradients", inf, true, func(c *Config) { c.Model, c.Clip = "cnn", "per-layer" }},
		{"cnn hybrid", "trainer.layeredGradients", inf, false, func(c *Config) { c.Model, c.Clip = "cnn", "hybrid" }},
		{"cnn augmult", "trainer.augmultGradients", inf, false, func(c *Config) { c.Model, c.Augmult = "cnn", 2 }},
	} {
		c := small(t)
		c.Dataset, c.Model, c.Hidden, c.TrainLimit, c.TestLimit = "embedded", "mlp", []int{8}, 32, 8
		c.BatchSize, c.MaxPhysicalBatch, c.ClipNorm, c.PrivateDiagnostics = 8, 8, 0.05, false
		tc.set(&c)
		s := &state{cfg: c}
		if err := s.setup(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := fmt.Sprintf("%T", s.grad); got != tc.strategy {
			t.Fatalf("%s: strategy %s, want %s", tc.name, got, tc.strategy)
		}
		in := s.model.InputSize()
		idx := []int{3, 10, 7, 5}
		poisoned := idx[len(idx)-1]
		for j := range in {
			s.data.train.X[poisoned*in+j] = tc.poison
		}
		d := s.model.NumParams()
		with, without := make([]float32, d), make([]float32, d)
		var st stepStats
		s.grad.start(5)
		if err := s.grad.chunk(idx, with, &st); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if st.nonFinite != 1 {
			t.Fatalf("%s: %d examples dropped, want the poisoned one", tc.name, st.nonFinite)
		}
		s.grad.start(5)
		if err := s.grad.chunk(idx[:len(idx)-1], without, &st); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for j := range with {
			w, o := float64(with[j]), float64(without[j])
			same := math.Float32bits(with[j]) == math.Float32bits(without[j])
			if !tc.exact {
				same = math.Abs(w-o) <= 1e-5*math.Max(math.Abs(o), 1e-3)
			}
			if !same {
				t.Errorf("%s: sum[%d] = %v with the dropped example, %v without", tc.name, j, w, o)
				break
			}
		}
	}
}
