package trainer

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/rng"
)

// neighbourCase is one zoo model × gradient strategy of the
// neighbouring-dataset test.
type neighbourCase struct {
	name     string
	strategy string // the gradient strategy setup must choose (%T)
	// noChunk says why the chunk-level comparison does not apply.
	noChunk string
	set     func(c *Config)
}

// tabularStrategies are the strategies Validate accepts on a table, for
// logistic regression and the MLP: the norm-only path (flat, per-layer,
// quantile clipping; Poisson and shuffle sampling; final-only; the clipped
// count; banded matrix-factorization noise), the factored path (hybrid
// clipping, twice sampling), materialised gradients (L∞ clipping; hybrid
// with the private diagnostics, which read them) and lattice noise.
var tabularStrategies = []neighbourCase{
	{"norm-only flat", "*trainer.normOnlyGradients", "", func(c *Config) {}},
	{"norm-only per-layer", "*trainer.normOnlyGradients", "", func(c *Config) { c.Clip = mechanism.PerLayer }},
	{"norm-only clip quantile", "*trainer.normOnlyGradients", "", func(c *Config) { c.ClipQuantile, c.QuantileCountSigma = 0.5, 10 }},
	{"norm-only shuffle", "*trainer.normOnlyGradients", "", func(c *Config) { c.Sampler = mechanism.Shuffle }},
	{"norm-only final-only", "*trainer.normOnlyGradients", "", func(c *Config) {
		c.FinalOnly, c.Radius, c.Optimizer, c.Momentum = true, 5, OptimizerSGD, 0
	}},
	{"norm-only clipped count", "*trainer.normOnlyGradients", "", func(c *Config) { c.ClippedCountSigma = 4 }},
	{"norm-only bandmf", "*trainer.normOnlyGradients", "", func(c *Config) { c.Noise, c.Bands, c.BatchSize, c.Sampler = NoiseBandMF, 2, 18, mechanism.Cyclic }},
	{"norm-only bandmf poisson", "*trainer.normOnlyGradients", "", func(c *Config) { c.Noise, c.Bands, c.BatchSize = NoiseBandMF, 2, 18 }},
	{"factored hybrid", "trainer.factoredGradients", "", func(c *Config) { c.Clip, c.D0 = mechanism.Hybrid, 4 }},
	{"factored twice", "trainer.factoredGradients", "twice sampling draws its coordinate masks per chunk, so chunks of different sizes get different masks",
		func(c *Config) { c.Sampler, c.Q2, c.Clip, c.D0 = mechanism.Twice, 0.5, mechanism.Hybrid, 4 }},
	{"materialised linf", "trainer.materialisedGradients", "", func(c *Config) { c.Clip = mechanism.LInf }},
	{"materialised hybrid twice (private diagnostics)", "trainer.materialisedGradients", "twice sampling draws its coordinate masks per chunk",
		func(c *Config) {
			c.Sampler, c.Q2, c.Clip, c.D0, c.PrivateDiagnostics = mechanism.Twice, 0.5, mechanism.Hybrid, 4, true
		}},
	{"lattice", "*trainer.latticeGradients", "", func(c *Config) { c.Noise = NoiseLattice }},
}

// imageStrategies are the image models' (the MNIST CNN, ResNet-20 with
// GroupNorm): norm-only (flat, per-layer), layered
// (hybrid), materialised (L∞), augmentation multiplicity and lattice noise.
var imageStrategies = []neighbourCase{
	{"norm-only flat", "*trainer.normOnlyGradients", "", func(c *Config) {}},
	{"norm-only per-layer", "*trainer.normOnlyGradients", "", func(c *Config) { c.Clip = mechanism.PerLayer }},
	{"layered hybrid", "trainer.layeredGradients", "", func(c *Config) { c.Clip, c.D0 = mechanism.Hybrid, 64 }},
	{"materialised linf", "trainer.materialisedGradients", "", func(c *Config) { c.Clip = mechanism.LInf }},
	{"augmult", "trainer.augmultGradients", "", func(c *Config) { c.Augmult = 2 }},
	{"lattice", "*trainer.latticeGradients", "", func(c *Config) { c.Noise = NoiseLattice }},
}

// A dropped example contributes exactly nothing (issue 37, HIGH 1), as the
// definition of neighbouring datasets reads, for every zoo model and every
// gradient strategy:
//
//   - one chunk's clipped sum with an extreme example equals the sum
//     without it (bit for bit on the norm-only and lattice paths, which
//     recompute or skip; to float rounding elsewhere, where the forward
//     GEMM rounds a row differently with the chunk's size), and the
//     example is counted as dropped;
//   - a run on D and a run on D plus one extreme but finite record both
//     complete all their steps, release finite parameters, and release the
//     same files with the same number of metrics records.
//
// The records do not cancel: all-positive 3e38 overflows the logits, and
// the mixed one overflows the MLP's hidden layer to ±Inf. (The image
// models' normalisation keeps 3e38 finite, so their chunk check poisons
// with +Inf, a stand-in for a hidden layer that overflows.) Before the fix, the
// norm-only path multiplied the record's NaN output gradient by its clip
// scale 0 (0·NaN = NaN), and the run stopped as diverged at a step the
// record chose. The runs are small: 40 rows with q = 0.75 over 3 steps
// (the record is in some batch but with probability 0.25³ ≈ 1.6%, and the
// chunk check covers each path regardless).
func TestExtremeRecordChangesNothingReleasedButTheValues(t *testing.T) {
	tabular := map[string][]float32{
		"large": {3e38, 3e38, 3e38, 3e38},
		"mixed": {3e38, -1e38, 2e38, 3e38},
	}
	inf := float32(math.Inf(1))
	for _, model := range []Model{ModelLogReg, ModelMLP} {
		for _, k := range tabularStrategies {
			t.Run(fmt.Sprintf("%s/%s", model, k.name), func(t *testing.T) {
				c := neighbourConfig(t)
				c.Model, c.Hidden = model, nil
				if model == ModelMLP {
					c.Hidden = []int{8}
				}
				c.BatchSize, c.Steps, c.EvalEvery = 30, 3, 3
				k.set(&c)
				// Logistic regression starts from zero weights, so 3e38
				// gives a finite (clipped) gradient at step 0: +Inf
				// stands in for the logits it overflows later.
				poison := float32(3e38)
				if model == ModelLogReg {
					poison = inf
				}
				dropsInChunk(t, c, k, tabularData(t, 40, 4), poison)
				compareNeighbours(t, c, tabularData(t, 40, 4), tabular)
			})
		}
	}
	for _, im := range []struct {
		model Model
		shape []int
	}{{ModelCNN, []int{1, 28, 28}}, {ModelResNet20, []int{3, 32, 32}}} {
		large := make([]float32, im.shape[0]*im.shape[1]*im.shape[2])
		for i := range large {
			large[i] = 3e38
		}
		for _, k := range imageStrategies {
			t.Run(fmt.Sprintf("%s/%s", im.model, k.name), func(t *testing.T) {
				c := neighbourConfig(t)
				c.Model, c.Hidden = im.model, nil
				c.BatchSize, c.Steps, c.EvalEvery, c.MaxPhysicalBatch = 8, 2, 2, 8
				k.set(&c)
				dropsInChunk(t, c, k, imageData(t, 12, im.shape), inf)
				compareNeighbours(t, c, imageData(t, 10, im.shape), map[string][]float32{"large": large})
			})
		}
	}
}

// neighbourConfig is small's configuration without the private
// diagnostics (they force the materialised path) or checkpoints, with one
// evaluation per run and σ = 5: the assertions do not depend on σ, and
// the PLD accountant's ε query, most of a small run's time, is several
// times cheaper at σ = 5 than at 1.
func neighbourConfig(t *testing.T) Config {
	c := small(t)
	c.PrivateDiagnostics, c.KeepCheckpoint, c.CheckpointEvery, c.Sigma = false, false, 0, 5
	return c
}

// dropsInChunk sets up c on d (which it changes), checks the strategy is
// k's, and compares one chunk's sum with its last example set to poison
// (every feature) and without that example.
func dropsInChunk(t *testing.T, c Config, k neighbourCase, d [2]*datasets.Dataset, poison float32) {
	t.Helper()
	c.Dataset = DatasetMemory
	s := &state{cfg: c, opts: Options{Train: d[0], Test: d[1]}}
	if err := s.setup(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%T", s.grad); got != k.strategy {
		t.Fatalf("strategy %s, want %s", got, k.strategy)
	}
	if k.noChunk != "" {
		return
	}
	in := s.model.InputSize()
	idx := []int{3, 1, 7, 5}
	for j := range in {
		s.data.train.X[idx[3]*in+j] = poison
	}
	np := s.model.NumParams()
	sums := [2][]float32{make([]float32, np), make([]float32, np)}
	var ints [2][]int64
	for i, ix := range [][]int{idx, idx[:3]} {
		var st stepStats
		s.grad.start(5)
		if err := s.grad.chunk(ix, sums[i], &st); err != nil {
			t.Fatal(err)
		}
		if want := 1 - i; st.nonFinite != want {
			t.Fatalf("%d examples dropped from a chunk of %d, want %d", st.nonFinite, len(ix), want)
		}
		if lg, ok := s.grad.(*latticeGradients); ok {
			ints[i] = slices.Clone(lg.acc)
		}
	}
	// The lattice sums agree to the float rounding of the materialised
	// rows, a lattice step or two (the forward GEMM rounds a row
	// differently with the chunk's size).
	for j := range ints[0] {
		a, b := float64(ints[0][j]), float64(ints[1][j])
		if math.Abs(a-b) > 2+1e-5*math.Max(math.Abs(a), math.Abs(b)) {
			t.Fatalf("lattice sum[%d] = %v steps with the dropped example, %v without", j, a, b)
		}
	}
	exact := k.strategy == "*trainer.normOnlyGradients"
	for j := range sums[0] {
		w, o := float64(sums[0][j]), float64(sums[1][j])
		same := math.Float32bits(sums[0][j]) == math.Float32bits(sums[1][j])
		if !exact {
			same = math.Abs(w-o) <= 1e-5*math.Max(math.Abs(o), 1e-3)
		}
		if !same {
			t.Fatalf("poison %v: sum[%d] = %v with the dropped example, %v without", poison, j, w, o)
		}
	}
}

// tabularData is n public-shape training rows of d features in 3 classes
// and a test set of 30.
func tabularData(t *testing.T, n, d int) [2]*datasets.Dataset {
	t.Helper()
	r := rng.New(41)
	mk := func(m int) *datasets.Dataset {
		rows, labels := make([][]float32, m), make([]int, m)
		for i := range rows {
			labels[i] = i % 3
			rows[i] = make([]float32, d)
			for j := range rows[i] {
				rows[i][j] = float32(labels[i]) + float32(r.Float64())
			}
		}
		ds, err := datasets.FromSlices("t", rows, labels)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	return [2]*datasets.Dataset{mk(n), mk(30)}
}

// imageData is n training images of the given shape in 10 classes and 20
// test images.
func imageData(t *testing.T, n int, shape []int) [2]*datasets.Dataset {
	t.Helper()
	r := rng.New(43)
	mk := func(m int) *datasets.Dataset {
		rows, labels := make([][]float32, m), make([]int, m)
		for i := range rows {
			labels[i] = i % 10
			rows[i] = make([]float32, shape[0]*shape[1]*shape[2])
			for j := range rows[i] {
				rows[i][j] = float32(r.Float64())
			}
		}
		ds, err := datasets.FromSlices("img", rows, labels)
		if err != nil {
			t.Fatal(err)
		}
		ds.Shape = slices.Clone(shape)
		return ds
	}
	return [2]*datasets.Dataset{mk(n), mk(20)}
}

// neighbourRun is what a run released: every file of its output directory
// (release/ and private/), its steps and its metrics records.
type neighbourRun struct {
	files   []string
	steps   int
	records int
}

// compareNeighbours runs c on D and on D plus each extreme record (label
// 0) and checks what the definition needs of the released outputs.
func compareNeighbours(t *testing.T, c Config, data [2]*datasets.Dataset, extremes map[string][]float32) {
	t.Helper()
	train, test := data[0], data[1]
	without := runReleased(t, c, train, test, "without the record")
	for _, name := range slices.Sorted(maps.Keys(extremes)) {
		rows, labels := make([][]float32, 0, train.N()+1), make([]int, 0, train.N()+1)
		d := train.Dim()
		for i := range train.N() {
			rows = append(rows, train.X[i*d:(i+1)*d])
			labels = append(labels, train.Y[i])
		}
		rows, labels = append(rows, extremes[name]), append(labels, 0)
		withX, err := datasets.FromSlices(train.Name, rows, labels)
		if err != nil {
			t.Fatal(err)
		}
		withX.Shape = train.Shape
		with := runReleased(t, c, withX, test, "with the "+name+" record")
		if !slices.Equal(with.files, without.files) || with.steps != without.steps || with.records != without.records {
			t.Errorf("with the %s record: released %v (%d steps, %d metrics records), without it %v (%d, %d)",
				name, with.files, with.steps, with.records, without.files, without.steps, without.records)
		}
	}
}

// runReleased runs c on train, requires every planned step and finite
// released parameters, and lists what it released.
func runReleased(t *testing.T, c Config, train, test *datasets.Dataset, what string) neighbourRun {
	t.Helper()
	c.OutDir = t.TempDir()
	s, err := Run(context.Background(), c, Options{Train: train, Test: test})
	if err != nil {
		t.Fatalf("the run %s: %v", what, err)
	}
	if s.Steps != c.Steps {
		t.Fatalf("the run %s took %d of %d steps", what, s.Steps, c.Steps)
	}
	m, err := models.LoadNet(filepath.Join(c.OutDir, "release", "model.bin"), models.Options{})
	if err != nil {
		t.Fatalf("the run %s: %v", what, err)
	}
	for j, v := range m.Params() {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("the run %s: released parameter %d is %v", what, j, v)
		}
	}
	var out neighbourRun
	err = filepath.WalkDir(c.OutDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(c.OutDir, p)
			out.files = append(out.files, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out.files)
	recs, err := ReadMetrics(filepath.Join(c.OutDir, "release", "metrics.jsonl"))
	if err != nil {
		t.Fatalf("the run %s: %v", what, err)
	}
	out.steps, out.records = s.Steps, len(recs)
	return out
}
