package trainer

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/preprocess"
)

func table(t *testing.T, cols []string, rows [][]float32) *datasets.Dataset {
	t.Helper()
	d, err := datasets.FromSlices("t", rows, make([]int, len(rows)))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SetSchema(cols, nil); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestClipReport(t *testing.T) {
	// 4 rows; petal clipped in 3 of 4 (75%), sepal in 0; width in 1 of 20 rows below.
	test := table(t, []string{"sepal", "petal"}, [][]float32{{0.5, 1.4}, {0.2, 4.7}, {0.9, 0.3}, {0.1, 6.0}})
	got := clipReport(test, preprocess.FeatureBounds{Lo: []float64{0, 0}, Hi: []float64{1, 1}})
	for _, w := range []string{"warning", `"petal" 75.0%`, "more than 5%"} {
		if !strings.Contains(got, w) {
			t.Errorf("narrow bounds: %q lacks %q", got, w)
		}
	}
	if strings.Contains(got, "sepal") {
		t.Errorf("narrow bounds: %q names a column clipped nowhere", got)
	}
	if got := clipReport(test, preprocess.FeatureBounds{Lo: []float64{0, 0}, Hi: []float64{1, 8}}); !strings.Contains(got, "clip none of the public test set's 8 values") {
		t.Errorf("wide bounds: %q", got)
	}
	rows := make([][]float32, 40)
	for i := range rows {
		rows[i] = []float32{float32(i) / 40, 0.5}
	}
	rows[0][0] = -1 // 1 of 40 values of x: 2.5%, 1 of 80 in all: 1.25%
	small := table(t, []string{"x", "y"}, rows)
	if got := clipReport(small, preprocess.FeatureBounds{Lo: []float64{0, 0}, Hi: []float64{1, 1}}); strings.Contains(got, "warning") || !strings.Contains(got, `1.25% of the public test set's values ("x" 2.5%)`) {
		t.Errorf("one clipped value: %q", got)
	}
}

func TestScaleAdvice(t *testing.T) {
	for _, tc := range []struct {
		rows [][]float32
		want string // "" : no advice
	}{
		// ranges 0.2 and 1180: ratio 5900 → 10^3.
		{[][]float32{{0.1, 500}, {0.3, 1680}, {0.2, 900}}, `about 10^3 ("a" narrowest, "b" widest)`},
		// ranges 1 and 50: ratio 50, below 100.
		{[][]float32{{0, 0}, {1, 50}}, ""},
		// a constant column has no range and is ignored.
		{[][]float32{{7, 0}, {7, 1}}, ""},
	} {
		got := scaleAdvice(table(t, []string{"a", "b"}, tc.rows))
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) || (got != "" && !strings.Contains(got, "--scale")) {
			t.Errorf("%v: %q, want %q", tc.rows, got, tc.want)
		}
	}
}

func TestNoiseAdvice(t *testing.T) {
	// Test values 0, 1 alternating under bounds 0:1: normalised ±½, spread
	// ½, variance ¼. The advice fires when noiseStd/n > ½·¼ = 0.125.
	rows := [][]float32{{0}, {1}, {0}, {1}}
	test := table(t, []string{"x"}, rows)
	b := preprocess.FeatureBounds{Lo: []float64{0}, Hi: []float64{1}}
	for _, tc := range []struct {
		noiseStd float64
		n        int
		warn     bool
	}{
		{10, 100, false}, // 0.1
		{13, 100, true},  // 0.13
		{13, 1000, false},
	} {
		got := noiseAdvice(test, b, tc.noiseStd, tc.n)
		if (got != "") != tc.warn || (tc.warn && !strings.Contains(got, `"x"`)) {
			t.Errorf("noise std %g, n %d: %q, want a warning: %v", tc.noiseStd, tc.n, got, tc.warn)
		}
	}
}

// Options.Log receives the run's data line and notes, the scaling advice
// among them, before training.
func TestLogReceivesDataNotes(t *testing.T) {
	rows := make([][]float32, 200)
	labels := make([]int, 200)
	for i := range rows {
		rows[i] = []float32{0.1 + 0.001*float32(i%7), 500 + 5*float32(i%11)}
		labels[i] = i % 2
	}
	train, _ := datasets.FromSlices("wide", rows, labels)
	test, _ := datasets.FromSlices("wide", rows[:50], labels[:50])
	cfg := Default()
	cfg.Model, cfg.Epsilon, cfg.Delta, cfg.Steps, cfg.BatchSize, cfg.Seeded, cfg.Plots = ModelLogReg, 4, 1e-4, 2, 50, true, false
	var log bytes.Buffer
	if _, err := Run(context.Background(), cfg, Options{Train: train, Test: test, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "data memory (in-memory data") || !strings.Contains(log.String(), "note warning: the public test set's feature ranges differ") {
		t.Errorf("Options.Log received %q", log.String())
	}
}
