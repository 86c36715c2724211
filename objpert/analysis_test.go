package objpert

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/rng"
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
	X, y := SyntheticLogistic(2000, 5, rng.New(1))
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
	r := rng.New(3)
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
		// The account: release (Thm 5: ε = 1) + the report's overhead. Each
		// release is calibrated to ε = 1 at δ, so the summed bound is the
		// number of releases; RDP composition is tighter.
		releases := map[Mode]float64{0: 0, DataDependent: 2, Adaptive: 3}[mode]
		near(t, "summed report overhead", a.ReportDP.Epsilon, releases, 1e-9)
		wantTotal := 1 + releases
		if mode != 0 {
			if !(a.ReportRDP.Epsilon < releases) {
				t.Errorf("%v: RDP-composed overhead %v not below %v", mode, a.ReportRDP.Epsilon, releases)
			}
			wantTotal = 1 + a.ReportRDP.Epsilon
		}
		near(t, "total account", a.Total.Epsilon, wantTotal, 1e-12)
	}
	if _, err := Analyze(X, y, AnalysisConfig{Loss: Logistic{}, Epsilon: -1, Delta: 1e-5}, r); err == nil {
		t.Error("negative epsilon: want an error")
	}
}

// A released model written as JSON and read back gives the same analysis
// without refitting: the perturbation is implied by the data (b = −∇J), so
// every record's exact ex-post pDP and report bound agree with Analyze's.
func TestAnalyzeModelRoundTrip(t *testing.T) {
	r := rng.New(8)
	X, y := SyntheticLogistic(300, 6, r)
	c := AnalysisConfig{Loss: Logistic{}, Epsilon: 1, Delta: 1e-5, Rho: 0.05}
	a, err := Analyze(X, y, c, r)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(a.Model)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), "noise") || strings.Count(string(js), ",") != 7+2*(len(a.Model.Theta)-1) {
		t.Errorf("model JSON holds more than the public release: %s", js)
	}
	var m Model
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	b, err := AnalyzeModel(&m, X, y, AnalysisConfig{Delta: 1e-5, Rho: 0.05, Mode: Adaptive, Eps2: 1, Eps3: 1, Eps4: 1}, r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Records {
		near(t, "exact eps1", b.Records[i].Exact.Epsilon, a.Records[i].Exact.Epsilon, 1e-12)
		near(t, "indep bound", b.Records[i].Indep, a.Records[i].Indep, 1e-12)
		if math.IsNaN(b.Records[i].Dep) || b.Records[i].Eps4 <= 0 {
			t.Fatalf("record %d: adaptive report missing (%v, eps4 %v)", i, b.Records[i].Dep, b.Records[i].Eps4)
		}
	}
	// Thm 6's derived bound at Thm 5's calibration (λ = 0.5, σ = 10.082)
	// is below the calibrated ε = 1.
	want := ObjPertEpsilon(0.5, a.Model.Sigma, 1, 0.25, 1e-5, true)
	near(t, "release epsilon", b.Release.Epsilon, want, 1e-12)
	if !(want < 1) {
		t.Errorf("derived bound %v at Thm 5's calibration for ε = 1", want)
	}
	near(t, "total", b.Total.Epsilon, want+b.ReportRDP.Epsilon, 1e-12)
	// b ~ N(0, σ²I) in d = 6: ‖b‖/(σ√d) is a χ_6/√6 draw.
	if !(a.ImpliedNoise > 0.3 && a.ImpliedNoise < 2) || math.Abs(a.ImpliedNoise-b.ImpliedNoise) > 1e-12 {
		t.Errorf("implied noise %v and %v, want equal and ≈ 1", a.ImpliedNoise, b.ImpliedNoise)
	}
	// At the grid point θ̃ the implied b̃ = −∇J(θ̃) is within ‖H‖·‖θ̃ − θ̂‖ of b,
	// with ‖H‖ ≤ λ + nβ and ‖θ̃ − θ̂‖ ≤ √d·w (plus the tiny solve residual).
	tol := (0.5 + 300*0.25) * math.Sqrt(6) * a.Model.Grid / (a.Model.Sigma * math.Sqrt(6))
	near(t, "implied noise from b", a.ImpliedNoise, norm(a.Model.Noise())/(a.Model.Sigma*math.Sqrt(6)), tol)
	for _, bad := range []string{
		`{}`, `{"mechanism":"objective-perturbation","loss":"svm","theta":[1],"lambda":1,"sigma":1}`,
		`{"mechanism":"objective-perturbation","loss":"logreg","theta":[],"lambda":1,"sigma":1}`,
		`{"mechanism":"objective-perturbation","loss":"logreg","theta":[1],"lambda":0,"sigma":1}`,
		`{"mechanism":"objective-perturbation","loss":"logreg","theta":[1],"lambda":1,"sigma":-2}`,
		`{"mechanism":"objective-perturbation","loss":"logreg","theta":[1],"lambda":1,"sigma":"2"}`,
	} {
		var m Model
		if err := json.Unmarshal([]byte(bad), &m); !errors.Is(err, ErrInput) {
			t.Errorf("%s: error %v, want ErrInput", bad, err)
		}
	}
	if err := json.Unmarshal([]byte(`{"mechanism":"objective-perturbation","loss":"logreg","theta":[1,2`), &m); err == nil {
		t.Error("truncated JSON: want an error")
	}
	if _, err := AnalyzeModel(&m, X.Slice(0, 300, 0, 5).(*mat.Dense), y, AnalysisConfig{Delta: 1e-5}, r); !errors.Is(err, ErrInput) {
		t.Errorf("dimension mismatch: error %v, want ErrInput", err)
	}
}

// FuzzModelJSON: a model file either fails with ErrInput (or a JSON syntax
// error) or yields a usable model that round-trips exactly.
func FuzzModelJSON(f *testing.F) {
	f.Add(`{"mechanism":"objective-perturbation","loss":"logreg","theta":[0.5,-1],"lambda":0.5,"sigma":10}`)
	f.Add(`{"mechanism":"objective-perturbation","loss":"linreg","theta":[1e308],"lambda":1e-300,"sigma":1}`)
	f.Add(`{"loss":"logreg"}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		var m Model
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			var syn *json.SyntaxError
			if !errors.Is(err, ErrInput) && !errors.As(err, &syn) {
				t.Fatalf("error %v is neither ErrInput nor a syntax error", err)
			}
			return
		}
		if m.Loss == nil || len(m.Theta) == 0 || !(m.Lambda > 0) || !(m.Sigma > 0) || math.IsInf(m.Lambda, 0) || math.IsInf(m.Sigma, 0) {
			t.Fatalf("accepted an unusable model %+v", m)
		}
		js, err := json.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		var m2 Model
		if err := json.Unmarshal(js, &m2); err != nil {
			t.Fatalf("round trip of %s: %v", js, err)
		}
		if m2.Lambda != m.Lambda || m2.Sigma != m.Sigma || m2.Loss != m.Loss || len(m2.Theta) != len(m.Theta) {
			t.Fatalf("round trip changed the model: %+v vs %+v", m, m2)
		}
		for i := range m.Theta {
			if m2.Theta[i] != m.Theta[i] {
				t.Fatalf("theta[%d] %v became %v", i, m.Theta[i], m2.Theta[i])
			}
		}
	})
}
