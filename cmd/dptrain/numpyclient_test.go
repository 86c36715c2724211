package main

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/rng"
)

// numpyPython is a python3 that imports numpy: Debian's (python3-numpy)
// first, then the one on PATH. Without one the test skips, except under
// CI=true, where the skip is a failure (.ci/run installs python3-numpy).
func numpyPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import numpy").Run() == nil {
			return py
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no python3 with numpy (apt-get install python3-numpy); CI=true makes this a failure")
	}
	t.Skip("no python3 with numpy")
	return ""
}

// parseProbs reads rows of comma-separated numbers, skipping the first
// skipCols columns and a header line when header.
func parseProbs(t *testing.T, out string, header bool, skipCols int) [][]float64 {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if header {
		lines = lines[1:]
	}
	rows := make([][]float64, len(lines))
	for i, l := range lines {
		for _, f := range strings.Split(l, ",")[skipCols:] {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatalf("line %d: %v", i, err)
			}
			rows[i] = append(rows[i], v)
		}
	}
	return rows
}

func maxDiff(a, b [][]float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return math.Inf(1)
		}
		for j := range a[i] {
			d = max(d, math.Abs(a[i][j]-b[i][j]))
		}
	}
	return d
}

// TestNumpyClientMatchesPredict rebuilds the forward pass of exported
// models in scripts/numpy_client.py, from the export's metadata alone, and
// compares its probabilities with dptrain predict's (printed to 6
// significant digits) on generated inputs: within 1e-5. With an activation
// dropped from the metadata the client must disagree.
func TestNumpyClientMatchesPredict(t *testing.T) {
	py := numpyPython(t)
	script, err := filepath.Abs("../../scripts/numpy_client.py")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		spec   models.Spec
		format string
		scale  float64 // of the random parameters (0: keep the initialisation)
		drop   string  // an activation to drop from model.json (npy only)
		pre    []models.Transform
	}{
		{"logreg", models.Spec{Arch: "logreg", InputSize: 12, Classes: 3}, "safetensors", 0.3, "", nil},
		{"logreg2", models.Spec{Arch: "logreg", InputSize: 12, Classes: 2}, "npy", 0.3, "", nil},
		{"mlp", models.Spec{Arch: "mlp", InputSize: 12, Classes: 4, Widths: []int{16, 8}, Activation: "tanh"}, "npy", 0, "tanh", nil},
		{"mnistcnn", models.Spec{Arch: "mnistcnn"}, "npy", 0.2, "tanh", nil},
		{"resnet20gn", models.Spec{Arch: "resnet20gn"}, "npy", 0, "relu", nil},
		// Inputs in [0,1) clipped to [0.2, 0.8] and standardised (--scale).
		{"logreg clip_scale", models.Spec{Arch: "logreg", InputSize: 12, Classes: 3}, "npy", 0.3, "", []models.Transform{{
			Type: "clip_scale", Lo: slices.Repeat([]float64{0.2}, 12), Hi: slices.Repeat([]float64{0.8}, 12),
			Mean: slices.Repeat([]float64{0.5}, 12), Scale: slices.Repeat([]float64{0.1}, 12)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := models.New(tc.spec, models.Options{Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			s := rng.New(11)
			if tc.scale > 0 {
				for i := range m.Params() {
					m.Params()[i] = float32(tc.scale * s.NormFloat64())
				}
			}
			m.SetPreprocess(tc.pre)
			model := filepath.Join(dir, tc.name+".bin")
			if err := m.SaveFile(model); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for range 4 {
				for j := range m.InputSize() {
					if j > 0 {
						b.WriteString(",")
					}
					b.WriteString(strconv.FormatFloat(s.Float64(), 'g', -1, 32))
				}
				b.WriteString("\n")
			}
			input := filepath.Join(dir, tc.name+".csv")
			if err := os.WriteFile(input, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errb := runCLI(t, "predict", "--model", model, "--input", input)
			if code != 0 {
				t.Fatalf("predict: exit %d: %s", code, errb)
			}
			want := parseProbs(t, out, true, 1)
			exp := filepath.Join(dir, tc.name+"."+tc.format)
			if code, _, errb := runCLI(t, "export", "--model", model, "--format", tc.format, "--out", exp); code != 0 {
				t.Fatalf("export: exit %d: %s", code, errb)
			}
			client := func() [][]float64 {
				o, err := exec.Command(py, script, exp, input).CombinedOutput()
				if err != nil {
					t.Fatalf("numpy client: %v: %s", err, o)
				}
				return parseProbs(t, string(o), false, 0)
			}
			d := maxDiff(client(), want)
			if d > 1e-5 {
				t.Fatalf("numpy client and predict differ by %g", d)
			}
			lo, hi := 1.0, 0.0
			for _, r := range want {
				lo, hi = min(lo, r[0]), max(hi, r[0])
			}
			t.Logf("max difference %.2g; first column's probabilities in [%.4f, %.4f]", d, lo, hi)
			if tc.drop == "" {
				return
			}
			// Negative control: the metadata is what the client runs.
			js := filepath.Join(exp, "model.json")
			raw, err := os.ReadFile(js)
			if err != nil {
				t.Fatal(err)
			}
			var md map[string]any
			if err := json.Unmarshal(raw, &md); err != nil {
				t.Fatal(err)
			}
			var kept []any
			for _, l := range md["layers"].([]any) {
				if l.(map[string]any)["type"] != tc.drop {
					kept = append(kept, l)
				}
			}
			md["layers"] = kept
			raw, _ = json.Marshal(md)
			os.WriteFile(js, raw, 0o644)
			if d := maxDiff(client(), want); d <= 1e-4 {
				t.Fatalf("without its %s layers the client still agrees (%g): the test cannot see a missing activation", tc.drop, d)
			}
		})
	}
}
