package main

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The quick run reproduces docs/twice-sampling.md#paper-tables (an
// independent python3 accountant) to 0.1 point, the paper's Table 1 within the
// documented deltas, and §7.5's hybrid-clipping example.
func TestQuickRunMatchesSpec(t *testing.T) {
	out := t.TempDir()
	res, err := run(true, out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := [][4]float64{ // reference, rows in the order of rows
		{95.4, 95.1, 92.3, 89.1},
		{96.3, 96.0, 93.7, 91.0},
		{86.8, 86.0, 78.4, 71.0},
		{89.2, 88.5, 82.1, 76.0},
		{67.4, 65.7, 53.5, 45.8},
		{73.1, 71.6, 61.5, 55.4},
	}
	for i := range want {
		for j := range budgets {
			if got := res.cells[[2]int{i, j}].ratio; math.Abs(got-want[i][j]) > 0.1 {
				t.Errorf("%s ε=%g: ratio %.2f%%, spec %.1f%%", rows[i].label, budgets[j].eps, got, want[i][j])
			}
		}
	}
	// Baseline multipliers (reference) at q = 0.02, ε = 2 and q = 0.01, ε = 8.
	if z := res.cells[[2]int{2, 0}].zBase; math.Abs(z-2.11361) > 2e-5 {
		t.Errorf("baseline q=0.02 ε=2: z=%.6f want 2.11361", z)
	}
	if z := res.cells[[2]int{5, 3}].zBase; math.Abs(z-0.81524) > 2e-5 {
		t.Errorf("baseline q=0.01 ε=8: z=%.6f want 0.81524", z)
	}
	// The paper's swapped ε=4 cells: each of ours is within 1.05 points of
	// the OTHER row's printed value, and far from its own.
	c06, c04 := res.cells[[2]int{2, 2}].ratio, res.cells[[2]int{3, 2}].ratio
	if math.Abs(c06-77.4) > 1.05 || math.Abs(c04-82.2) > 1.05 || math.Abs(c06-82.2) < 3 || math.Abs(c04-77.4) < 3 {
		t.Errorf("swapped cells: ours %.1f and %.1f vs paper 82.2 / 77.4", c06, c04)
	}
	if math.Abs(res.isoOverHyb-5.533768214) > 1e-8 {
		t.Errorf("isotropic/hybrid = %.9f, want 5.533768214", res.isoOverHyb)
	}
	for k, w := range []float64{0.1371, 0.1569} {
		if got := res.hybrids[k].ratio; math.Abs(got-w) > 1e-4 {
			t.Errorf("hybrid example %d: ratio %.5f want %.4f", k, got, w)
		}
	}
	for _, f := range []string{"twice_noise.md", "table1_noise_ratios.csv", "table1_noise_ratios.png", "table1_noise_ratios.svg"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("output %s missing or empty: %v", f, err)
		}
	}
}
