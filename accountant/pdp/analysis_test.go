package pdp

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/internal/rng"
)

func TestQuantile(t *testing.T) {
	v := []float64{5, 1, math.NaN(), 3, 2, 4}
	for _, c := range []struct{ p, want float64 }{{0, 1}, {0.5, 3}, {0.25, 2}, {0.9, 4.6}, {1, 5}} {
		near(t, "quantile", Quantile(v, c.p), c.want, 1e-12)
	}
	if !math.IsNaN(Quantile([]float64{math.NaN()}, 0.5)) {
		t.Error("quantile of no numbers should be NaN")
	}
}

func TestSyntheticLogistic(t *testing.T) {
	X, y := SyntheticLogistic(2000, 5, rng.NewSeeded(1))
	pos := 0
	for i := range y {
		if y[i] != 1 && y[i] != -1 {
			t.Fatalf("label %v", y[i])
		}
		if y[i] == 1 {
			pos++
		}
		if n := norm(X.RawRowView(i)); n > 1 {
			t.Fatalf("row %d has norm %v > 1", i, n)
		}
	}
	// Uniform in the 5-ball: E‖x‖² = d/(d+2) = 5/7.
	s := 0.0
	for i := range y {
		s += dot(X.RawRowView(i), X.RawRowView(i))
	}
	near(t, "mean squared norm", s/2000, 5.0/7, 0.02)
	if pos == 0 || pos == 2000 {
		t.Errorf("degenerate labels: %d positives", pos)
	}
}

func TestAnalyze(t *testing.T) {
	r := rng.NewSeeded(3)
	X, y := SyntheticLogistic(400, 10, r)
	for _, mode := range []Mode{0, DataDependent, Adaptive} {
		c := AnalysisConfig{Loss: Logistic{}, Epsilon: 1, Delta: 1e-5, Rho: 0.05, Mode: mode, Eps2: 1, Eps3: 1, Eps4: 1}
		a, err := Analyze(X, y, c, r)
		if err != nil {
			t.Fatal(err)
		}
		lam, sigma, _ := CalibrateObjPert(1, 1e-5, 1, 0.25)
		near(t, "sigma", a.Model.Sigma, sigma, 1e-12)
		if mode == DataDependent {
			if a.Model.Lambda < 2*a.Dep.Tau*a.Dep.Sigma3-1e-12 || a.Model.Lambda <= lam {
				t.Errorf("data-dependent lambda %v not raised to 2τσ3 = %v", a.Model.Lambda, 2*a.Dep.Tau*a.Dep.Sigma3)
			}
		} else {
			near(t, "lambda", a.Model.Lambda, lam, 1e-12)
		}
		under := 0
		for _, rec := range a.Records {
			if rec.Indep < rec.Exact.Epsilon {
				under++
			}
			if mode != 0 && rec.Dep < rec.Exact.Epsilon {
				under++
			}
		}
		if under > 40 { // w.h.p. at most ρ of the 400 (×2) per-record bounds fail
			t.Errorf("%v: %d report values below the exact loss", mode, under)
		}
		top := a.MostExposed(5)
		for i := 1; i < len(top); i++ {
			if a.Records[top[i]].Exact.Epsilon > a.Records[top[i-1]].Exact.Epsilon {
				t.Errorf("MostExposed not sorted: %v", top)
			}
		}
		if mode != 0 && !(a.ReportDP.Epsilon > 0) {
			t.Errorf("%v report has DP overhead %v", mode, a.ReportDP.Epsilon)
		}
	}
	if _, err := Analyze(X, y, AnalysisConfig{Loss: Logistic{}, Epsilon: -1, Delta: 1e-5}, r); err == nil {
		t.Error("negative epsilon: want an error")
	}
}
