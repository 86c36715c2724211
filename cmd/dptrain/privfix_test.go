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
// naming the label column but neither its line nor its label (issue 37's
// rule), and nothing written (issue 29 #1).
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
		if tc.code == 2 && (strings.Contains(stderr, "zebra") || strings.Contains(stderr, "line") || !strings.Contains(stderr, "label column")) {
			t.Errorf("%v: stderr %q names the training label or its line, or not the label column", tc.extra, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "release", "summary.json")); (err == nil) != (tc.code == 0) {
			t.Errorf("%v: release/summary.json written: %v", tc.extra, err == nil)
		}
	}
}

// sweepTotals returns the "total:" lines of a sweep's output and whether it
// says the totals do not add.
func sweepTotals(out string) (totals []string, apart bool) {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "total: ") {
			totals = append(totals, l)
		}
		apart = apart || strings.Contains(l, "the totals do not add")
	}
	return totals, apart
}

// A sweep prints the composed ε of its whole table (issue 29, finding 5):
// one total per neighbouring relation, saying when they do not add; and a
// seeded sweep marks every ε as not a private release (finding 4), an
// unseeded one does not.
func TestSweepTotal(t *testing.T) {
	args := []string{"sweep", "--dataset", "synthetic", "--model", "logreg", "--batch", "100", "--steps", "4", "--sigma", "1", "--epsilon", "50"}
	for _, tc := range []struct {
		extra          []string
		totals         []string
		apart, private bool
	}{
		{[]string{"--seed", "3", "--grid", "lr=0.5,1"}, []string{"under add-remove neighbouring with the dataset size n treated as public (pld), composing every step of all 2 runs"}, false, false},
		{[]string{"--grid", "sampler=poisson,shuffle"}, []string{"under add-remove neighbouring with the dataset size n treated as public (pld), composing every step of runs 1 (in table order)",
			"under replace-one neighbouring with the dataset size n treated as public (rdp), composing every step of runs 2 (in table order)"}, true, true},
	} {
		code, out, stderr := runCLI(t, append(args, tc.extra...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.extra, code, stderr)
		}
		totals, apart := sweepTotals(out)
		ok := len(totals) == len(tc.totals) && apart == tc.apart
		for i := 0; ok && i < len(totals); i++ {
			ok = strings.Contains(totals[i], tc.totals[i]) && strings.Contains(totals[i], "†") != tc.private
		}
		if ok && strings.Contains(out, "†") == tc.private {
			ok = false
		}
		if !ok {
			t.Errorf("%v: totals %q (apart %v); want %q (apart %v), marked not private %v:\n%s", tc.extra, totals, apart, tc.totals, tc.apart, !tc.private, out)
		}
	}
}

// dptrain report in its default mode releases no report, and the
// per-record figures it prints are statistics of the training records:
// it must not call them post-processing of the released model (issue 29,
// finding 6).
func TestReportIndepIsNotPostProcessing(t *testing.T) {
	code, out, errs := runCLI(t, "report", "--synthetic", "--n", "200", "--d", "4", "--seed", "7", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "post-processing") || !strings.Contains(out, "statistics of the training records, not covered by ε: curator only") {
		t.Errorf("report output:\n%s", out)
	}
}
