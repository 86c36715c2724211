package main

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The quick run reproduces the reference Fig. 2 points and crossings
// (docs/srdp.md#paper-figures) and TV10 (Table 2), TV2 and TV5 (Theorem 2 at c
// = 2 and optimal c).
func TestQuickRunMatchesSpec(t *testing.T) {
	out := t.TempDir()
	res, err := run(true, out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]float64{
		"a eta=0.01 b=100": 5.25, "a eta=0.1 b=100": 421.05, "a group b=100": 20200.5,
		"b n=100 p=50": 5.25, "b group p=50": 1300.5, "b n=53 p=50": 1167.7,
		"c exact delta=0.07 n=500": 31064.66, "c 12.2 delta=0.07": 31895.34, "c group n=500": 125500.5,
	} {
		if got := res.points[key]; math.Abs(got-want) > 2e-5*want {
			t.Errorf("Fig. 2 %s = %.7g, want %.7g", key, got, want)
		}
	}
	wantCross := []float64{50.16, 249.1, 251.6, 116.6} // first four crossings, reference (printed to 4 digits)
	for i, w := range wantCross {
		if got := res.crossings[i].x; math.Abs(got-w) > 0.05 {
			t.Errorf("crossing %s %s at %.4f, want %.4g", res.crossings[i].panel, res.crossings[i].curve, got, w)
		}
	}
	// Optimal c in (b): α(1+τ)²ε²/2 meets α(1+p)²ε²/2 where τ = 2p/(53−p) = p.
	if got := res.crossings[6].x; math.Abs(got-51) > 1e-6 {
		t.Errorf("optimal-c crossing in (b) at %v, want 51", got)
	}
	tv10 := map[[2]string]float64{
		{"M_G", "dedup"}: 11.6655, {"M_G", "PCA (rank)"}: 68.87958, {"M_G", "standard scaling"}: 118.3875,
		{"A_GD", "mean imputation"}: 0.462047, {"A_GD", "PCA (rank)"}: 69.22608,
		{"M_L / M_E", "mean imputation"}: 0.10202, {"M_L / M_E", "standard scaling"}: 3.3,
		{"A_SGD-samp", "PCA (rank)"}: 71.30508, {"A_SGD-samp", "standard scaling"}: 120.813,
		{"A_SGD-iter", "dedup"}: 12.32544, {"A_SGD-iter", "mean imputation"}: 0.12105,
	}
	seen := 0
	for _, c := range res.table2 {
		if w, ok := tv10[[2]string{c.mech, c.prep}]; ok {
			seen++
			if math.Abs(c.closed-w) > 2e-6*w {
				t.Errorf("Table 2 %s / %s = %.7g, want %.7g", c.mech, c.prep, c.closed, w)
			}
		}
		if c.mech == "M_G" && c.prep == "standard scaling" && math.Abs(c.printed-3.8115) > 1e-9 {
			t.Errorf("Table 2 M_G scaling as printed = %v, want 3.8115", c.printed)
		}
		if c.mech == "M_G" && c.prep == "PCA (rank)" && (math.Abs(c.thm2c2-68.86908) > 1e-4 || math.Abs(c.thm2opt-35.48380) > 1e-4) {
			t.Errorf("TV2: Theorem 2 c=2 %.7g (68.86908), optimal %.7g (35.48380)", c.thm2c2, c.thm2opt)
		}
		if c.mech == "A_SGD-samp" && c.prep == "PCA (rank)" && (math.Abs(c.thm2c2-70.96908) > 1e-4 || math.Abs(c.thm2opt-53.15498) > 1e-4) {
			t.Errorf("TV5: Theorem 2 c=2 %.7g (70.96908), optimal %.7g (53.15498)", c.thm2c2, c.thm2opt)
		}
	}
	if seen != len(tv10) {
		t.Errorf("found %d of %d Table 2 cells", seen, len(tv10))
	}
	for _, f := range []string{"srdp_figures.md", "fig2.csv", "table2.csv", "fig2a_quantization.png", "fig2b_imputation.svg", "fig2c_pca.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("output %s missing or empty: %v", f, err)
		}
	}
}
