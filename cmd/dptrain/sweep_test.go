package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
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

// A run that fails mid-training is charged in the sweep's total (issue
// 37, finding 4): the total composes both runs, its row shows the steps it
// took; and no row prints wall time, a statistic of the training data
// (finding 7).
func TestSweepChargesFailedRuns(t *testing.T) {
	_, out, errOut := runCLI(t, "sweep", "--dataset", "synthetic", "--model", "logreg",
		"--batch", "100", "--steps", "4", "--sigma", "1", "--seed", "1", "--grid", "lr=0.5,1e300")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "lr") {
		t.Fatalf("table:\n%s\n%s", out, errOut)
	}
	if strings.Contains(lines[0], "seconds") {
		t.Errorf("header prints wall time: %q", lines[0])
	}
	if f := strings.Fields(lines[2]); f[0] != "1e300" || !strings.HasSuffix(f[1], "/4") || !strings.Contains(lines[2], "diverged") {
		t.Errorf("failed row: %q", lines[2])
	}
	total := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "total: ") {
			total = l
		}
	}
	if !strings.Contains(total, "composing every step of all 2 runs") {
		t.Errorf("total leaves out the failed run: %q", total)
	}
}

// Each run of a sweep says in its release (summary.json's claim and
// "sweep", report.html) that the sweep's total covers a run picked from the
// table, not its own ε (issue 37, finding 5).
func TestSweepRunsStateTheTotal(t *testing.T) {
	out := t.TempDir()
	code, stdout, errOut := runCLI(t, "sweep", "--dataset", "synthetic", "--model", "logreg", "--out", out,
		"--batch", "100", "--steps", "4", "--sigma", "1", "--seed", "1", "--plots=false", "--grid", "lr=0.5,1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var total float64
	for _, l := range strings.Split(stdout, "\n") {
		if rest, ok := strings.CutPrefix(l, "total: ε = "); ok {
			if _, err := fmt.Sscanf(rest, "%g", &total); err != nil {
				t.Fatal(err)
			}
		}
	}
	if total == 0 {
		t.Fatalf("no total in\n%s", stdout)
	}
	for i := 1; i <= 2; i++ {
		dir := filepath.Join(out, fmt.Sprintf("run-%02d", i))
		b, err := os.ReadFile(filepath.Join(dir, "release", "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rel struct {
			Claim string `json:"claim"`
			Best  struct {
				Epsilon float64 `json:"epsilon"`
			} `json:"best"`
			Sweep *struct {
				Run, Runs int
				Composed  []int `json:"composed_runs"`
				Total     struct {
					Epsilon float64 `json:"epsilon"`
				} `json:"total"`
				Own float64 `json:"own_epsilon"`
				Why string  `json:"why"`
			} `json:"sweep"`
		}
		if err := json.Unmarshal(b, &rel); err != nil {
			t.Fatal(err)
		}
		sw := rel.Sweep
		if sw == nil {
			t.Fatalf("run %d: release/summary.json states no sweep total; claim %q", i, rel.Claim)
		}
		if sw.Run != i || sw.Runs != 2 || !slices.Equal(sw.Composed, []int{1, 2}) || math.Abs(sw.Total.Epsilon-total) > 1e-4*total ||
			sw.Own != rel.Best.Epsilon || !(sw.Total.Epsilon > sw.Own) || !strings.Contains(sw.Why, "same training data") {
			t.Errorf("run %d: sweep %+v; want run %d of 2, total %v over runs 1, 2, own ε %v", i, sw, i, total, rel.Best.Epsilon)
		}
		if want := fmt.Sprintf("(ε = %.4g, δ = 1e-05)", sw.Total.Epsilon); !strings.HasPrefix(rel.Claim, want) || !strings.Contains(rel.Claim, "picked from a sweep") {
			t.Errorf("run %d: claim %q, want it to start %q", i, rel.Claim, want)
		}
		page, err := os.ReadFile(filepath.Join(dir, "release", "report.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), fmt.Sprintf("This run is run %d of the 2 runs of a sweep", i)) {
			t.Errorf("run %d: report.html does not state the sweep", i)
		}
		priv, err := os.ReadFile(filepath.Join(dir, "private", "summary.json"))
		if err != nil || !strings.Contains(string(priv), `"composed_runs"`) {
			t.Errorf("run %d: private/summary.json lacks the sweep (%v)", i, err)
		}
	}
}

// train says what a failed run's steps cost (issue 37, finding 4).
func TestTrainFailedRunStatesItsAccount(t *testing.T) {
	code, _, errOut := runCLI(t, "train", "--dataset", "synthetic", "--model", "logreg", "--out", t.TempDir(),
		"--batch", "100", "--steps", "4", "--sigma", "1", "--seed", "1", "--lr", "1e300", "--quiet")
	if code == 0 || !strings.Contains(errOut, "the run failed after 1 of 4 steps, all charged: ε = ") || !strings.Contains(errOut, "diverged") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
