package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/models"
)

// A model with NaN or infinite weights, and a run at an absurd learning
// rate, warn on stderr (before: exit 0, no word); a sound model and a usual
// learning rate do not. The warnings read the released parameters or the
// flag, nothing else of the data.
func TestWarningsForDivergedModelsAndRates(t *testing.T) {
	dir, good, csv, m := savedLogreg(t)
	p := m.Params()
	p[0], p[4], p[7] = float32(math.NaN()), float32(math.Inf(1)), float32(math.NaN())
	bad := filepath.Join(dir, "nan.bin")
	if err := m.SaveFile(bad); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		warn string // "" = no warning
	}{
		{[]string{"eval", "--model", bad, "--dataset", "csv", "--test", csv}, bad + " has 3 non-finite parameters (NaN or ±Inf) of 12"},
		{[]string{"predict", "--model", bad, "--input", csv, "--out", filepath.Join(dir, "p.csv")}, bad + " has 3 non-finite parameters"},
		{[]string{"eval", "--model", good, "--dataset", "csv", "--test", csv}, ""},
		{[]string{"train", "--quiet", "--model", "logreg", "--lr", "1e30", "--steps", "2", "--seed", "1", "--sigma", "1", "--epsilon", "0", "--out", filepath.Join(dir, "lr30")}, "warning: --lr 1e+30 is far above any step size that trains"},
		{[]string{"train", "--quiet", "--model", "logreg", "--lr", "2", "--steps", "2", "--seed", "1", "--sigma", "1", "--epsilon", "0", "--out", filepath.Join(dir, "lr2")}, ""},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
		}
		if tc.warn == "" && strings.Contains(stderr, "warning:") {
			t.Errorf("%v: unexpected warning: %s", tc.args, stderr)
		}
		if tc.warn != "" && !strings.Contains(stderr, tc.warn) {
			t.Errorf("%v: stderr %q lacks the warning %q", tc.args, stderr, tc.warn)
		}
	}
}

// A model.bin whose layer description is inconsistent (a negative size)
// is refused by export as by load, naming the layer; before, export wrote
// it out with the wrong shapes.
func TestExportRefusesInconsistentDescription(t *testing.T) {
	dir := t.TempDir()
	m, err := models.NewMLP(4, []int{8}, 3, "relu", models.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	md, err := m.Meta()
	if err != nil {
		t.Fatal(err)
	}
	md.Layers[2].In = -1
	path := filepath.Join(dir, "model.bin")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := models.WriteParams(fh, models.ParamFile{Arch: m.Arch(), Meta: &md, Groups: m.Groups(), Params: m.Params()}); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	for _, args := range [][]string{
		{"export", "--model", path, "--format", "npy", "--out", filepath.Join(dir, "npy")},
		{"export", "--model", path, "--format", "safetensors", "--out", filepath.Join(dir, "m.safetensors")},
		{"predict", "--model", path, "--input", path},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != 2 || !strings.Contains(stderr, "layer 2 (linear) has in = -1") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming layer 2's in", args, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "npy")); err == nil {
		t.Error("export wrote its output for a refused model")
	}
}
