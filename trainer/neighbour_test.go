package trainer

import (
	"context"
	"fmt"
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

// A dropped example contributes exactly nothing (issue 37, HIGH 1), as the
// definition of neighbouring datasets reads: for every zoo model and every
// gradient strategy, a run on D and a run on D plus one extreme but finite
// record (large positive values, which overflow the logits without
// cancelling; or a mix that drives hidden layers to ±Inf) both complete,
// release finite parameters, and release the same files with the same
// number of records. Before the fix, the norm-only path multiplied the
// record's NaN output gradient by its clip scale 0 (0·NaN = NaN), and the
// run stopped as diverged at a step the record chose.
func TestExtremeRecordChangesNothingReleasedButTheValues(t *testing.T) {
	type tc struct {
		name string
		edit func(*Config)
	}
	tabular := []tc{
		{"flat (norm-only)", func(c *Config) {}},
		{"per-layer (norm-only)", func(c *Config) { c.Clip = mechanism.PerLayer }},
		{"clip quantile", func(c *Config) { c.ClipQuantile = 0.5 }},
		{"shuffle", func(c *Config) { c.Sampler = mechanism.Shuffle }},
		{"hybrid (factored)", func(c *Config) { c.Clip, c.D0 = mechanism.Hybrid, 4 }},
		{"twice (factored)", func(c *Config) { c.Sampler, c.Q2, c.Clip, c.D0 = mechanism.Twice, 0.5, mechanism.Hybrid, 4 }},
		{"linf (materialised)", func(c *Config) { c.Clip = mechanism.LInf }},
		{"private diagnostics (materialised)", func(c *Config) { c.Clip, c.PrivateDiagnostics = mechanism.Hybrid, true; c.D0 = 4 }},
		{"lattice", func(c *Config) { c.Noise = NoiseLattice }},
		{"final only", func(c *Config) { c.FinalOnly, c.Radius, c.Optimizer, c.Momentum = true, 5, OptimizerSGD, 0 }},
		{"clipped count", func(c *Config) { c.ClippedCountSigma = 4 }},
		{"bandmf", func(c *Config) { c.Noise, c.Bands = NoiseBandMF, 2 }},
	}
	extremes := map[string][]float32{
		"large":    {3e38, 3e38, 3e38, 3e38},
		"overflow": {3e38, -1e38, 2e38, 3e38},
	}
	for _, model := range []Model{ModelLogReg, ModelMLP} {
		for _, k := range tabular {
			for ename, ex := range extremes {
				t.Run(fmt.Sprintf("%s/%s/%s", model, k.name, ename), func(t *testing.T) {
					c := small(t)
					c.Model, c.Hidden = model, nil
					if model == ModelMLP {
						c.Hidden = []int{8}
					}
					c.BatchSize, c.Steps, c.EvalEvery, c.CheckpointEvery = 40, 6, 3, 0
					k.edit(&c)
					compareNeighbours(t, c, tabularData(t, 120, 4), ex)
				})
			}
		}
	}
	// Conv nets: the MNIST CNN on 28×28 inputs (norm-only, layered with
	// hybrid clipping, materialised with L∞, augmentation multiplicity).
	conv := []tc{
		{"flat (norm-only)", func(c *Config) {}},
		{"hybrid (layered)", func(c *Config) { c.Clip, c.D0 = mechanism.Hybrid, 64 }},
		{"linf (materialised)", func(c *Config) { c.Clip = mechanism.LInf }},
		{"augmult", func(c *Config) { c.Augmult = 2 }},
	}
	for _, k := range conv {
		t.Run("cnn/"+k.name, func(t *testing.T) {
			c := small(t)
			c.Model, c.Hidden = ModelCNN, nil
			c.BatchSize, c.Steps, c.EvalEvery, c.CheckpointEvery = 8, 3, 3, 0
			c.MaxPhysicalBatch = 8
			k.edit(&c)
			ex := make([]float32, 28*28)
			for i := range ex {
				ex[i] = 3e38
			}
			compareNeighbours(t, c, imageData(t, 24), ex)
		})
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

// imageData is n 1×28×28 training images in 10 classes and 20 test images.
func imageData(t *testing.T, n int) [2]*datasets.Dataset {
	t.Helper()
	r := rng.New(43)
	mk := func(m int) *datasets.Dataset {
		rows, labels := make([][]float32, m), make([]int, m)
		for i := range rows {
			labels[i] = i % 10
			rows[i] = make([]float32, 28*28)
			for j := range rows[i] {
				rows[i][j] = float32(r.Float64())
			}
		}
		ds, err := datasets.FromSlices("img", rows, labels)
		if err != nil {
			t.Fatal(err)
		}
		ds.Shape = []int{1, 28, 28}
		return ds
	}
	return [2]*datasets.Dataset{mk(n), mk(20)}
}

// compareNeighbours runs c on D and on D plus the record x (label 0) and
// checks what the definition needs of the released outputs.
func compareNeighbours(t *testing.T, c Config, data [2]*datasets.Dataset, x []float32) {
	t.Helper()
	train, test := data[0], data[1]
	rows, labels := make([][]float32, 0, train.N()+1), make([]int, 0, train.N()+1)
	d := train.Dim()
	for i := range train.N() {
		rows = append(rows, train.X[i*d:(i+1)*d])
		labels = append(labels, train.Y[i])
	}
	rows, labels = append(rows, x), append(labels, 0)
	withX, err := datasets.FromSlices(train.Name, rows, labels)
	if err != nil {
		t.Fatal(err)
	}
	withX.Shape = train.Shape
	var files [2][]string
	var records [2]int
	for i, tr := range []*datasets.Dataset{train, withX} {
		ci := c
		ci.OutDir = t.TempDir()
		s, err := Run(context.Background(), ci, Options{Train: tr, Test: test})
		if err != nil {
			t.Fatalf("run %d (with the record: %v): %v", i, i == 1, err)
		}
		if s.Steps != c.Steps {
			t.Fatalf("run %d took %d of %d steps", i, s.Steps, c.Steps)
		}
		m, err := models.LoadNet(filepath.Join(ci.OutDir, "release", "model.bin"), models.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range m.Params() {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("run %d (with the record: %v): released parameter %d is %v", i, i == 1, j, v)
			}
		}
		ents, err := os.ReadDir(filepath.Join(ci.OutDir, "release"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			files[i] = append(files[i], e.Name())
		}
		recs, err := ReadMetrics(filepath.Join(ci.OutDir, "release", "metrics.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		records[i] = len(recs)
	}
	if !slices.Equal(files[0], files[1]) || records[0] != records[1] {
		t.Errorf("released files %v (%d records) without the record, %v (%d records) with it", files[0], records[0], files[1], records[1])
	}
}
