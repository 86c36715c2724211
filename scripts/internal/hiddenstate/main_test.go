package main

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The quick run reproduces the independent recomputation of paper 002's
// figures (docs/hidden-state.md#test-vectors, python3): Fig. 3's reference
// lines, TV2/TV3 (Fig. 1), TV6 (Fig. 2) and TV7 (crossover with RDP).
func TestQuickRunMatchesSpec(t *testing.T) {
	out := t.TempDir()
	res, err := run(true, out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.epsStar-3.6474545145563932) > 1e-7 {
		t.Errorf("ε* (eq. 22) = %.10f, want 3.6474545", res.epsStar)
	}
	if math.Abs(res.closedForm-4.618894009391167) > 1e-7 {
		t.Errorf("eq. (23) = %.10f, want 4.6188940", res.closedForm)
	}
	for T, want := range map[int]float64{1: 5.807017594422201e-04, 2: 9.175790783280909e-04, 10: 1.3770513048573527e-03, 100: 1.383021868725903e-03} {
		if got := res.fig1Delta[T]; math.Abs(got-want) > 1e-9*want {
			t.Errorf("Fig. 1 left δ_%d(3) = %.16g, want %.16g", T, got, want)
		}
	}
	for T, want := range map[int]float64{1: 0, 2: 2.6896403974154297, 5: 3.5784572588043857, 10: 3.6455039075481355, 20: 3.647452629324947} {
		if got := res.fig1Eps[T]; math.Abs(got-want) > 1e-7 {
			t.Errorf("Fig. 1 right ε_%d(1e-3) = %.10f, want %.10f", T, got, want)
		}
	}
	// RDP of the same mechanism (z = 50) is far below the hidden-state
	// bound at T = 1e6 and only crosses ε* beyond 1e9 steps.
	if e := res.fig1RDPEps[1000000]; !(e > 0 && e < 0.1) {
		t.Errorf("Fig. 1 RDP ε at T=1e6 = %v, want in (0, 0.1)", e)
	}
	if res.crossFig1 < 1e9 {
		t.Errorf("Fig. 1 RDP/hidden crossover at T=%d, want beyond 1e9", res.crossFig1)
	}
	fig2 := []struct {
		lambda float64
		d      int
		mode   fig2Mode
		T      int
		want   float64
	}{
		{0.65, 1, paperLiteral, 10, 5.15377e-4},
		{0.65, 1, paperLiteral, 1000, 9.51740e-4},
		{0.65, 1, corrected, 100, 2.44705e-2},
		{0.65, 10, paperLiteral, 100, 2.69822e-3},
		{0.65, 10, corrected, 1000, 4.33088e-1},
		{0.01, 1, paperLiteral, 100, 9.43866e-2},
		{0.01, 1, corrected, 1000, 6.31937e-1},
	}
	for _, c := range fig2 {
		got := res.fig2[fig2Key{c.lambda, c.d, c.mode}][c.T][0]
		if math.Abs(got-c.want) > 1e-5*c.want { // the reference prints 6 digits
			t.Errorf("Fig. 2 λ=%g d=%d %v T=%d: δ=%.6g, want %.6g", c.lambda, c.d, c.mode, c.T, got, c.want)
		}
	}
	// The reference paper-literal λ=0.01, T=1000 value 0.632568 lies above the
	// never-sampled cap, which the accountant applies.
	if got, cap := res.fig2[fig2Key{0.01, 1, paperLiteral}][1000][0], -math.Expm1(1000*math.Log1p(-0.001)); got != cap {
		t.Errorf("Fig. 2 λ=0.01 paper-literal T=1000: %.7g, want the cap %.7g", got, cap)
	}
	for T, want := range map[int]float64{100: 0.214337, 1000000: 2.702881, 5000000: 6.431860, 10000000: 9.521680} {
		if got := res.tv7RDPLemma[T]; math.Abs(got-want) > 1e-6 {
			t.Errorf("TV7 RDP ε at T=%d = %.7f, want %.6f", T, got, want)
		}
		if got := res.tv7HS[T]; math.Abs(got-6.005649128414802) > 1e-7 {
			t.Errorf("TV7 hidden ε at T=%d = %.9f, want 6.005649128", T, got)
		}
	}
	if c := float64(res.crossTV7Lemma); math.Abs(c-4.4e6) > 0.005*4.4e6 {
		t.Errorf("TV7 crossover at T=%v, want ≈ 4.400e6", c)
	}
	for _, f := range []string{"hidden_state.md", "fig1_fig3.csv", "fig2.csv", "tv7_crossover.csv", "fig1_left.png", "fig1_right_fig3.svg", "fig2_lambda0.65.png", "fig2_lambda0.01.svg", "tv7_crossover.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("output %s missing or empty: %v", f, err)
		}
	}
}
