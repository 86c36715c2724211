package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// audit bound matches the one-run procedure: with every guess correct and
// δ = 0, ε = log(q/(1−q)) for q = 0.05^(1/r) (closed form, to 1e-6).
func TestAuditBound(t *testing.T) {
	for _, r := range []int{20, 100, 500} {
		code, out, errs := runCLI(t, "audit", "bound", "--canaries", "1000", "--guesses", strconv.Itoa(r), "--correct", strconv.Itoa(r), "--delta", "0", "--json")
		var got struct {
			Eps float64 `json:"epsilon_lower"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("exit %d: %s %s", code, out, errs)
		}
		q := math.Pow(0.05, 1/float64(r))
		if want := math.Log(q / (1 - q)); math.Abs(got.Eps-want) > 1e-6 {
			t.Errorf("r = %d: ε_lower %v, closed form %v", r, got.Eps, want)
		}
	}
	for _, args := range [][]string{
		{"audit", "bound", "--canaries", "10", "--guesses", "20", "--correct", "5", "--delta", "0"},
		{"audit", "bound", "--canaries", "10", "--guesses", "4", "--correct", "5", "--delta", "0"},
		{"audit", "bound", "--canaries", "10", "--guesses", "4", "--correct", "3"},
		{"audit", "--canaries", "1"},
		{"audit", "--canaries", "100", "--kind", "pixels"},
		{"audit", "--canaries", "100", "--clip", "hybrid"},
	} {
		if code, _, errs := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, errs)
		}
	}
}

// dptrain audit trains with canaries and prints the lower bound beside the
// accounted ε, writing the score plot to release/.
func TestAuditRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "a")
	code, stdout, errs := runCLI(t, "audit", "--canaries", "200", "--model", "logreg", "--steps", "20", "--epsilon", "2", "--seed", "1", "--quiet", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"privacy   (ε = 1.99", "with the dataset size n treated as public", "audit     ε_lower = ", "200 canaries", "verdict   consistent"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	// The plot splits scores by the private inclusion bits: private/, 0600.
	if fi, err := os.Stat(filepath.Join(out, "private", "audit_scores.png")); err != nil || fi.Size() < 1000 || fi.Mode().Perm() != 0o600 {
		t.Errorf("score plot: %v; want private/audit_scores.png, mode 0600", err)
	}
	if _, err := os.Stat(filepath.Join(out, "release", "audit_scores.png")); err == nil {
		t.Error("release/audit_scores.png written")
	}
}
