package main

import (
	"strings"
	"testing"
)

// A 2×2 grid prints one row per combination in order, each with its own
// calibrated σ and ε; the clip_quantile rows share the plain rows' σ and ε.
func TestSweepTable(t *testing.T) {
	code, out, errOut := runCLI(t, "sweep", "--dataset", "synthetic", "--model", "mlp", "--hidden", "8",
		"--batch", "100", "--steps", "6", "--epsilon", "2", "--seed", "1",
		"--grid", "lr=0.5,1", "--grid", "clip-quantile=0,0.5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// header, 4 rows, the seeded mark's footnote, the total, the caveat
	if len(lines) != 8 || !strings.HasPrefix(lines[0], "lr") || !strings.HasPrefix(lines[5], "† seeded") ||
		!strings.HasPrefix(lines[6], "total: ε = ") || !strings.Contains(lines[6], "† (δ = 1e-05) under add-remove neighbouring with the dataset size n treated as public (pld), composing every step of all 4 runs") ||
		!strings.HasPrefix(lines[7], "note:") || !strings.Contains(lines[7], "test set") {
		t.Fatalf("table:\n%s", out)
	}
	var eps []string
	for i, want := range [][2]string{{"0.5", "0"}, {"0.5", "0.5"}, {"1", "0"}, {"1", "0.5"}} {
		f := strings.Fields(lines[i+1])
		if f[0] != want[0] || f[1] != want[1] || f[2] != "6" {
			t.Fatalf("row %d: %q", i, lines[i+1])
		}
		eps = append(eps, f[3]+" "+f[4])
	}
	for _, e := range eps[1:] {
		if e != eps[0] {
			t.Fatalf("σ and ε differ between runs of equal steps and q: %q", eps)
		}
	}
}

func TestSweepBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"sweep"},
		{"sweep", "--grid", "lr"},
		{"sweep", "--grid", "nosuch=1,2"},
		{"sweep", "--grid", "out=a,b"},
		{"sweep", "--grid", "lr=1,", "--steps", "2"},
		{"sweep", "--grid", "lr=1,2", "--grid", "lr=3"},
		{"sweep", "--grid", "lr=x,2", "--steps", "2"},
		{"sweep", "--grid", "augmult=-1", "--steps", "2"},
		{"sweep", "--grid", "lr=1,2,3", "--grid", "batch=1,2,3", "--max-runs", "8"},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
