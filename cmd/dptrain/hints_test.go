package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/models"
)

// Issue 40 item 8: each hint and exit status, and no hint prints a
// training value.
func TestHintsAndExitCodes(t *testing.T) {
	dir := t.TempDir()
	labelFirst := filepath.Join(dir, "label_first.csv")
	os.WriteFile(labelFirst, []byte("SECRETLABEL,1,2\nOTHERLABEL,3,4\nSECRETLABEL,5,6\n"), 0o644)
	val := func(i int, c string) string {
		if c == "y" {
			return []string{"no", "yes"}[i%2]
		}
		return fmt.Sprint(float64(i%2) - 0.5 + 0.01*float64(i))
	}
	table := filepath.Join(dir, "t.csv")
	writeColumns(t, table, []string{"a", "b", "y"}, 30, val)
	base := []string{"train", "--dataset", "csv", "--steps", "1", "--batch", "10", "--sigma", "1", "--epsilon", "0", "--quiet"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"text label in the first column", []string{"--train", labelFirst, "--test", labelFirst, "--model", "logreg"}, 2, "name it with --label-column"},
		{"a table for the default cnn", []string{"--train", table, "--test", table}, 2, "use --model logreg or mlp for tables"},
		{"a table for resnet20", []string{"--train", table, "--test", table, "--model", "resnet20"}, 2, "use --model logreg or mlp for tables"},
		{"bounds: wrong count", []string{"--train", table, "--test", table, "--model", "logreg", "--scale", "minmax", "--feature-bounds", "0:1,0:1,0:1"}, 2, "3 pairs for 2 features"},
		{"bounds: lo ≥ hi", []string{"--train", table, "--test", table, "--model", "logreg", "--scale", "minmax", "--feature-bounds", "1:0"}, 2, "feature bounds"},
		{"bounds: not numbers", []string{"--train", table, "--test", table, "--model", "logreg", "--scale", "minmax", "--feature-bounds", "a:b"}, 2, "feature bounds"},
		{"bounds: no file", []string{"--train", table, "--test", table, "--model", "logreg", "--scale", "minmax", "--feature-bounds", "@" + filepath.Join(dir, "none")}, 2, "feature bounds"},
	} {
		code, _, errb := runCLI(t, append(append(base, "--out", filepath.Join(dir, strconv.Itoa(len(tc.name)))), tc.args...)...)
		if code != tc.code || !strings.Contains(errb, tc.want) || strings.Contains(errb, "SECRET") || strings.Contains(errb, "OTHERLABEL") {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q, no training value", tc.name, code, errb, tc.code, tc.want)
		}
	}

	// eval names its data once and labels the confusion matrix's rows and
	// columns with the class names.
	run := filepath.Join(dir, "run")
	if code, _, errb := runCLI(t, "train", "--dataset", "csv", "--train", table, "--test", table, "--model", "logreg",
		"--steps", "3", "--batch", "10", "--sigma", "0.5", "--epsilon", "0", "--lr", "1", "--quiet", "--out", run); code != 0 {
		t.Fatalf("train: exit %d: %s", code, errb)
	}
	model := filepath.Join(run, "release", "model.bin")
	code, out, errb := runCLI(t, "eval", "--model", model, "--dataset", "csv", "--test", table)
	if code != 0 {
		t.Fatalf("eval: exit %d: %s", code, errb)
	}
	if strings.Count(out, table) != 1 {
		t.Errorf("eval names %s %d times:\n%s", table, strings.Count(out, table), out)
	}
	lines := strings.Split(out, "\n")
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "confusion") {
			at = i
		}
	}
	if at < 0 || len(lines) < at+4 {
		t.Fatalf("eval printed no confusion matrix:\n%s", out)
	}
	header, no, yes := strings.Fields(lines[at+1]), strings.Fields(lines[at+2]), strings.Fields(lines[at+3])
	if strings.Join(header, " ") != "no yes" || no[0] != "no" || yes[0] != "yes" || len(no) != 3 || len(yes) != 3 {
		t.Errorf("confusion matrix without class labels:\n%s", strings.Join(lines[at:at+4], "\n"))
	}
	// Its counts add up to the rows of each class: 15 and 15.
	for _, row := range [][]string{no, yes} {
		a, _ := strconv.Atoi(row[1])
		b, _ := strconv.Atoi(row[2])
		if a+b != 15 {
			t.Errorf("row %q sums to %d, want 15", row, a+b)
		}
	}

	// predict --full-precision prints each probability exactly: parsed as
	// float32, it equals the model's own output.
	code, full, errb := runCLI(t, "predict", "--model", model, "--input", table, "--full-precision")
	if code != 0 {
		t.Fatalf("predict --full-precision: exit %d: %s", code, errb)
	}
	_, short, _ := runCLI(t, "predict", "--model", model, "--input", table)
	m, err := models.LoadNet(model, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var x []float32
	for i := range 30 {
		for _, c := range []string{"a", "b"} {
			v, _ := strconv.ParseFloat(val(i, c), 32)
			x = append(x, float32(v))
		}
	}
	probs, err := m.Predict(x, 30)
	if err != nil {
		t.Fatal(err)
	}
	fullRows, shortRows := strings.Split(strings.TrimSpace(full), "\n")[1:], strings.Split(strings.TrimSpace(short), "\n")[1:]
	longer := false
	for i, r := range fullRows {
		f, s := strings.Split(r, ","), strings.Split(shortRows[i], ",")
		for j := 1; j < len(f); j++ {
			v, err := strconv.ParseFloat(f[j], 32)
			if err != nil || float32(v) != probs[i*2+j-1] {
				t.Fatalf("row %d: %q reads back as %v, the model gives %v", i, f[j], v, probs[i*2+j-1])
			}
			longer = longer || len(f[j]) > len(s[j])
		}
	}
	if !longer {
		t.Error("--full-precision printed no more digits than the default")
	}
}
