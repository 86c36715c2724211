package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTable writes a two-feature CSV whose i-th row has label labels[i%len].
func writeTable(t *testing.T, path string, n int, labels ...string) {
	t.Helper()
	var b strings.Builder
	for i := range n {
		k := i % len(labels)
		b.WriteString(strings.Join([]string{[]string{"-1.5", "0.5", "2"}[k%3], []string{"1", "-1", "0"}[k%3], labels[k]}, ",") + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A training record whose label is outside the public class set (the test
// set's, or --classes) is refused before training: exit 2, a message
// naming its line but not its label, and nothing written (issue 29 #1).
func TestTrainRefusesLabelOutsidePublicClasses(t *testing.T) {
	dir := t.TempDir()
	train, test := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	writeTable(t, train, 20, "ant", "bee", "ant", "bee", "zebra")
	writeTable(t, test, 6, "ant", "bee")
	base := []string{"train", "--dataset", "csv", "--train", train, "--test", test, "--model", "logreg",
		"--steps", "2", "--sigma", "1", "--epsilon", "50", "--batch", "10", "--quiet"}
	for _, tc := range []struct {
		extra []string
		code  int
	}{
		{nil, 2},
		{[]string{"--classes", "ant,bee"}, 2},
		{[]string{"--classes", "ant,bee,zebra"}, 0},
	} {
		out := filepath.Join(dir, "out"+strings.Join(tc.extra, ""))
		code, _, stderr := runCLI(t, append(append(base, "--out", out), tc.extra...)...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tc.extra, code, tc.code, stderr)
		}
		if tc.code == 2 && (strings.Contains(stderr, "zebra") || !strings.Contains(stderr, "line 5")) {
			t.Errorf("%v: stderr %q names the training label or not its line", tc.extra, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "release", "summary.json")); (err == nil) != (tc.code == 0) {
			t.Errorf("%v: release/summary.json written: %v", tc.extra, err == nil)
		}
	}
}
