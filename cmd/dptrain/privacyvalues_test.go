package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A bad privacy value exits 2 (an input error, as the README says) in every
// command that takes one, with a message naming the value as given. Before,
// privacy and the paper accountants turned --sigma 1e-300 into "got 0".
func TestBadPrivacyValuesExitTwoEverywhere(t *testing.T) {
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"privacy", "--q", "0.01", "--sigma", "1e-300", "--steps", "100", "--delta", "1e-5"}, "--sigma 1e-300 is too small"},
		{[]string{"privacy", "--accountant", "pld", "--q", "0.01", "--sigma", "1e-300", "--steps", "100", "--delta", "1e-5"}, "--sigma 1e-300 is too small"},
		{[]string{"privacy", "--accountant", "twice", "--q", "0.01", "--q2", "0.5", "--d0", "64", "--sigma", "1e-300", "--steps", "100", "--delta", "1e-5"}, "--sigma 1e-300"},
		{[]string{"privacy", "--q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "2"}, "--delta must be in (0,1), got 2"},
		{[]string{"privacy", "--q", "1.5", "--sigma", "1", "--steps", "100", "--delta", "1e-5"}, "--q must be in (0,1], got 1.5"},
		{[]string{"privacy", "--q", "0.01", "--sigma", "NaN", "--steps", "100", "--delta", "1e-5"}, "got NaN"},
		{[]string{"calibrate", "--epsilon", "-1", "--delta", "1e-5", "--q", "0.01", "--steps", "100"}, "-1"},
		{[]string{"calibrate", "--epsilon", "1", "--delta", "5", "--q", "0.01", "--steps", "100"}, "got 5"},
		{[]string{"train", "--model", "logreg", "--epsilon", "-1", "--out", out("t1")}, "epsilon must be > 0, got -1"},
		{[]string{"train", "--model", "logreg", "--delta", "0", "--out", out("t2")}, "delta must be in (0,1), got 0"},
		{[]string{"train", "--model", "logreg", "--sigma", "1e-300", "--out", out("t3")}, "sigma 1e-300 is too small"},
		{[]string{"sweep", "--model", "logreg", "--grid", "epsilon=1,-1"}, "--epsilon=-1"},
		{[]string{"sweep", "--model", "logreg", "--delta", "2", "--grid", "lr=1,2"}, "got 2"},
		{[]string{"audit", "--model", "logreg", "--delta", "2", "--out", out("a1")}, "delta must be in (0,1), got 2"},
		{[]string{"audit", "--model", "logreg", "--confidence", "2", "--out", out("a2")}, "--confidence must be in (0,1), got 2"},
		{[]string{"audit", "bound", "--canaries", "10", "--guesses", "4", "--correct", "3", "--delta", "2"}, "delta must be in [0,1), got 2"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", tc.args, code, stderr, tc.want)
		}
	}
}
