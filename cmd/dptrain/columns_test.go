package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/models/nn"
)

// writeColumns writes rows of the columns cols from a record generator.
func writeColumns(t *testing.T, path string, cols []string, n int, val func(i int, col string) string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(strings.Join(cols, ",") + "\n")
	for i := range n {
		for j, c := range cols {
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString(val(i, c))
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The bug: a model trained with the label first (--label-column
// target) and given the test CSV without the flag used to drop the last
// feature and read the label as one. The model now reads its columns by
// name: same probabilities with or without the flag or with the columns
// reordered; a missing or extra column is refused naming it; class names
// are printed.
func TestPredictColumnsByName(t *testing.T) {
	dir := t.TempDir()
	val := func(i int, c string) string {
		switch c {
		case "target":
			return []string{"no", "yes"}[i%2]
		case "a":
			return fmt.Sprint(float64(i%2)*2 - 1 + 0.01*float64(i))
		case "b":
			return fmt.Sprint(0.5 - 0.02*float64(i%7))
		case "z":
			return "3"
		}
		return fmt.Sprint(float64(i%3) - 1)
	}
	train, test := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	writeColumns(t, train, []string{"target", "a", "b", "c"}, 60, val)
	writeColumns(t, test, []string{"target", "a", "b", "c"}, 20, val)
	run := filepath.Join(dir, "run")
	if code, _, errb := runCLI(t, "train", "--dataset", "csv", "--train", train, "--test", test, "--label-column", "target",
		"--model", "logreg", "--steps", "3", "--batch", "20", "--sigma", "0.5", "--epsilon", "0", "--clip-norm", "1", "--lr", "1",
		"--seed", "1", "--quiet", "--out", run); code != 0 {
		t.Fatalf("train: exit %d: %s", code, errb)
	}
	model := filepath.Join(run, "release", "model.bin")
	code, want, errb := runCLI(t, "predict", "--model", model, "--input", test, "--label-column", "target")
	if code != 0 {
		t.Fatalf("predict: exit %d: %s", code, errb)
	}
	lines := strings.Split(strings.TrimSpace(want), "\n")
	if len(lines) != 21 || lines[0] != "predicted,p_no,p_yes" || !strings.HasPrefix(lines[1], "no,") || !strings.HasPrefix(lines[2], "yes,") {
		t.Fatalf("predict printed %q", want)
	}
	reordered := filepath.Join(dir, "reordered.csv")
	writeColumns(t, reordered, []string{"c", "a", "target", "b"}, 20, val)
	unlabelled := filepath.Join(dir, "unlabelled.csv")
	writeColumns(t, unlabelled, []string{"b", "c", "a"}, 20, val)
	missing := filepath.Join(dir, "missing.csv")
	writeColumns(t, missing, []string{"target", "a", "c"}, 20, val)
	extra := filepath.Join(dir, "extra.csv")
	writeColumns(t, extra, []string{"target", "a", "b", "c", "z"}, 20, val)
	headerless := filepath.Join(dir, "headerless.csv")
	os.WriteFile(headerless, []byte("1,2,3\n4,5,6\n"), 0o644)
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		names string // in stderr
	}{
		{"label first, no flag", []string{"--input", test}, 0, ""},
		{"reordered", []string{"--input", reordered}, 0, ""},
		{"no label column", []string{"--input", unlabelled}, 0, ""},
		{"missing column", []string{"--input", missing}, 2, `missing column "b"`},
		{"extra column", []string{"--input", extra}, 2, `unknown column "z"`},
		{"flag names a feature", []string{"--input", test, "--label-column", "a"}, 2, "--label-column a names a column the model reads"},
		{"headerless", []string{"--input", headerless}, 2, "no header line"},
	} {
		code, out, errb := runCLI(t, append([]string{"predict", "--model", model}, tc.args...)...)
		if code != tc.code || (tc.code == 0 && out != want) || !strings.Contains(errb, tc.names) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d, the same output, stderr with %q", tc.name, code, errb, tc.code, tc.names)
		}
	}
	// eval reads the model's label column and class names by default.
	var accs []string
	for _, args := range [][]string{{"--test", test, "--label-column", "target"}, {"--test", test}, {"--test", reordered}} {
		code, out, errb := runCLI(t, append([]string{"eval", "--model", model, "--dataset", "csv"}, args...)...)
		if code != 0 {
			t.Fatalf("eval %v: exit %d: %s", args, code, errb)
		}
		if !strings.Contains(out, "classes   no, yes") {
			t.Errorf("eval %v printed no class names: %s", args, out)
		}
		accs = append(accs, strings.Split(out, "\n")[2])
	}
	if accs[0] != accs[1] || accs[0] != accs[2] {
		t.Errorf("eval accuracies differ: %q", accs)
	}
}

// Every model exports one tensor per weight and bias under its PyTorch
// state_dict name, and a FromLayers stack (once refused by eval/predict,
// exported flat) is rebuilt from its file.
func TestExportEveryModel(t *testing.T) {
	dir := t.TempDir()
	custom, err := models.FromLayers("custom", nn.Vec(4), 0, 1,
		nn.NewLinear[float32](4, 8, true), nn.NewTanh[float32](), nn.NewLinear[float32](8, 3, false))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec  models.Spec
		m     *models.Net
		names []string // first and last
		last  []int    // the last tensor's shape
		count int
	}{
		{spec: models.Spec{Arch: "logreg", InputSize: 30, Classes: 2}, names: []string{"0.weight", "0.bias"}, last: []int{1}, count: 2},
		{spec: models.Spec{Arch: "mlp", InputSize: 64, Classes: 10, Widths: []int{32, 16}}, names: []string{"0.weight", "4.bias"}, last: []int{10}, count: 6},
		{spec: models.Spec{Arch: "mnistcnn"}, names: []string{"0.weight", "9.bias"}, last: []int{10}, count: 8},
		{spec: models.Spec{Arch: "scatcnn", Shape: []int{243, 8, 8}}, names: []string{"0.weight", "6.bias"}, last: []int{10}, count: 6},
		{spec: models.Spec{Arch: "resnet20gn"}, names: []string{"0.weight", "22.bias"}, last: []int{10}, count: 65},
		{spec: models.Spec{Arch: "resnet22", WeightStd: true}, names: []string{"0.weight", "24.bias"}, last: []int{10}, count: 71},
		{m: custom, names: []string{"0.weight", "2.weight"}, last: []int{3, 8}, count: 3},
	} {
		m := tc.m
		if m == nil {
			if m, err = models.New(tc.spec, models.Options{}); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, "model.bin")
		if err := m.SaveFile(path); err != nil {
			t.Fatal(err)
		}
		st := filepath.Join(dir, "m.safetensors")
		if code, _, errb := runCLI(t, "export", "--model", path, "--out", st); code != 0 {
			t.Fatalf("%s: exit %d: %s", m.Arch(), code, errb)
		}
		b, _ := os.ReadFile(st)
		vals, shapes, meta := readSafetensors(t, b)
		var md models.Meta
		if err := json.Unmarshal([]byte(meta["model"]), &md); err != nil || md.Arch != m.Arch() {
			t.Fatalf("%s: metadata %v", m.Arch(), err)
		}
		if len(vals) != tc.count || shapes[tc.names[0]] == nil || fmt.Sprint(shapes[tc.names[1]]) != fmt.Sprint(tc.last) {
			t.Errorf("%s: %d tensors, %s %v, %s %v", m.Arch(), len(vals), tc.names[0], shapes[tc.names[0]], tc.names[1], shapes[tc.names[1]])
		}
	}
	// predict runs the FromLayers stack.
	path := filepath.Join(dir, "custom.bin")
	custom.SaveFile(path)
	in := filepath.Join(dir, "x.csv")
	os.WriteFile(in, []byte("1,2,3,4\n0,0,0,0\n"), 0o644)
	if code, out, errb := runCLI(t, "predict", "--model", path, "--input", in); code != 0 || len(strings.Split(strings.TrimSpace(out), "\n")) != 3 {
		t.Errorf("predict on a FromLayers model: exit %d, %q %s", code, out, errb)
	}
}

// eval applies the preprocessing model.bin records (DPSGD-F's privately
// released mean): its accuracy is the run's own test accuracy.
func TestEvalAppliesPreprocessing(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	if code, _, errb := runCLI(t, "train", "--dataset", "embedded", "--model", "logreg", "--dpsgdf", "--feature-clip", "1",
		"--feature-epsilon", "1", "--steps", "3", "--batch", "64", "--sigma", "1", "--epsilon", "0", "--clip-norm", "1",
		"--lr", "0.5", "--seed", "1", "--quiet", "--out", run); code != 0 {
		t.Fatalf("train: exit %d: %s", code, errb)
	}
	var sum struct {
		TestAcc float64 `json:"test_acc"`
	}
	b, err := os.ReadFile(filepath.Join(run, "release", "summary.json"))
	if err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("summary: %v", err)
	}
	model := filepath.Join(run, "release", "model.bin")
	m, err := models.LoadNet(model, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if md, _ := m.Meta(); len(md.Preprocess) != 1 || md.Preprocess[0].Type != "center" || md.Preprocess[0].C != 1 || len(md.Preprocess[0].Mean) != 784 {
		t.Fatalf("preprocess recorded: %+v", md.Preprocess)
	}
	code, out, errb := runCLI(t, "eval", "--model", model, "--dataset", "embedded", "--json")
	var r struct{ Accuracy float64 }
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("eval: exit %d: %s", code, errb)
	}
	if r.Accuracy != sum.TestAcc {
		t.Fatalf("eval accuracy %v, the run's test accuracy %v", r.Accuracy, sum.TestAcc)
	}
}

// Issue 40's first bug: train read the training table's features by
// position, so a training file with its columns in another order than the
// test file's trained on swapped features. Columns are now matched by name:
// the permuted training file gives the same weights and description as the
// one in order, model.bin records the test file's order (the one the weights
// use), and a renamed column, or a header on one side only, exits 2 naming
// the columns.
func TestTrainColumnsByName(t *testing.T) {
	dir := t.TempDir()
	val := func(i int, c string) string {
		switch c {
		case "target":
			return []string{"no", "yes"}[i%2]
		case "a":
			return fmt.Sprint(float64(i%2)*2 - 1 + 0.01*float64(i))
		case "b":
			return fmt.Sprint(0.5 - 0.02*float64(i%7))
		}
		return fmt.Sprint(float64(i%3) - 1 + 0.1*float64(i%5))
	}
	test := filepath.Join(dir, "test.csv")
	writeColumns(t, test, []string{"b", "target", "a", "c"}, 20, val)
	train := func(name string, cols []string) (int, string, string) {
		p := filepath.Join(dir, name+".csv")
		writeColumns(t, p, cols, 60, val)
		return runCLI(t, "train", "--dataset", "csv", "--train", p, "--test", test, "--label-column", "target",
			"--model", "logreg", "--steps", "4", "--batch", "20", "--noise", "continuous", "--sigma", "0.5", "--epsilon", "0",
			"--clip-norm", "1", "--lr", "1", "--seed", "3", "--quiet", "--out", filepath.Join(dir, name))
	}
	load := func(name string) ([]float32, models.Meta) {
		m, err := models.LoadNet(filepath.Join(dir, name, "release", "model.bin"), models.Options{})
		if err != nil {
			t.Fatal(err)
		}
		md, _ := m.Meta()
		return m.Params(), md
	}
	var want []float32
	for _, cols := range [][]string{
		{"b", "target", "a", "c"}, // the test file's order
		{"target", "a", "b", "c"},
		{"c", "a", "b", "target"},
	} {
		name := strings.Join(cols, "")
		if code, _, errb := train(name, cols); code != 0 {
			t.Fatalf("train %v: exit %d: %s", cols, code, errb)
		}
		params, md := load(name)
		if !slicesEqual(md.Input.Columns, []string{"b", "a", "c"}) || md.Input.LabelColumn != "target" {
			t.Errorf("train %v: model.bin records columns %q, label %q; want the test file's b, a, c", cols, md.Input.Columns, md.Input.LabelColumn)
		}
		if want == nil {
			want = params
		} else if !slicesEqual(params, want) {
			t.Errorf("train %v: weights %v, want %v (the columns in the test file's order)", cols, params, want)
		}
	}
	headerless := filepath.Join(dir, "headerless.csv")
	os.WriteFile(headerless, []byte("1,0,2,yes\n3,1,4,no\n"), 0o644)
	for _, tc := range []struct {
		name string
		cols []string
		want []string
	}{
		{"renamed", []string{"target", "a", "bee", "c"}, []string{`missing column "b"`, `unknown column "bee"`, "matched by name"}},
		{"extra", []string{"target", "a", "b", "c", "d"}, []string{`unknown column "d"`}},
		{"missing", []string{"target", "a", "c"}, []string{`missing column "b"`}},
	} {
		code, _, errb := train(tc.name, tc.cols)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2: %s", tc.name, code, errb)
		}
		for _, w := range tc.want {
			if !strings.Contains(errb, w) {
				t.Errorf("%s: stderr %q lacks %q", tc.name, errb, w)
			}
		}
	}
	code, _, errb := runCLI(t, "train", "--dataset", "csv", "--train", headerless, "--test", test, "--label-column", "target",
		"--model", "logreg", "--steps", "1", "--sigma", "1", "--epsilon", "0", "--quiet", "--out", filepath.Join(dir, "hl"))
	if code != 2 || !strings.Contains(errb, "no header line") {
		t.Errorf("headerless training file: exit %d: %s", code, errb)
	}
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// train, eval and predict read a table with one reader: a byte-order mark
// is dropped, an empty file or a header naming a column twice is refused
// (exit 2) alike.
func TestOneCSVReader(t *testing.T) {
	dir := t.TempDir()
	val := func(i int, c string) string {
		if c == "y" {
			return fmt.Sprint(i % 2)
		}
		return fmt.Sprint(float64(i%2) - 0.5 + 0.01*float64(i))
	}
	plain := filepath.Join(dir, "plain.csv")
	writeColumns(t, plain, []string{"a", "b", "y"}, 40, val)
	raw, _ := os.ReadFile(plain)
	files := map[string]string{"bom": "\ufeff" + string(raw), "empty": "", "duplicate": "a,a,y\n1,2,0\n3,4,1\n"}
	for name, text := range files {
		os.WriteFile(filepath.Join(dir, name+".csv"), []byte(text), 0o644)
	}
	base := []string{"--model", "logreg", "--steps", "2", "--batch", "20", "--sigma", "1", "--epsilon", "0", "--quiet"}
	if code, _, errb := runCLI(t, append([]string{"train", "--dataset", "csv", "--train", plain, "--test", plain, "--out", filepath.Join(dir, "run")}, base...)...); code != 0 {
		t.Fatalf("train: exit %d: %s", code, errb)
	}
	model := filepath.Join(dir, "run", "release", "model.bin")
	_, want, _ := runCLI(t, "predict", "--model", model, "--input", plain)
	for _, tc := range []struct{ file, err string }{{"bom", ""}, {"empty", "empty file"}, {"duplicate", `column "a" appears twice`}} {
		p := filepath.Join(dir, tc.file+".csv")
		for _, args := range [][]string{
			append([]string{"train", "--dataset", "csv", "--train", p, "--test", plain, "--out", filepath.Join(dir, tc.file+"tr")}, base...),
			append([]string{"train", "--dataset", "csv", "--train", plain, "--test", p, "--out", filepath.Join(dir, tc.file+"te")}, base...),
			{"eval", "--model", model, "--dataset", "csv", "--test", p},
			{"predict", "--model", model, "--input", p},
		} {
			code, out, errb := runCLI(t, args...)
			switch {
			case tc.err == "" && code != 0:
				t.Errorf("%s %s: exit %d: %s", args[0], tc.file, code, errb)
			case tc.err == "" && args[0] == "predict" && out != want:
				t.Errorf("predict %s: output differs from the file without a byte-order mark", tc.file)
			case tc.err != "" && (code != 2 || !strings.Contains(errb, tc.err) || !strings.Contains(errb, p)):
				t.Errorf("%s %v: exit %d, stderr %q; want 2 naming %s and %q", args[0], args[1:], code, errb, p, tc.err)
			}
		}
	}
}
