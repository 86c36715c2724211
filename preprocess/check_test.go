package preprocess

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/rng"
	"gonum.org/v1/gonum/mat"
)

func TestCheckEigengapAndBounds(t *testing.T) {
	// Points (±0.8, 0), (0, ±0.4): centred 1/n covariance diag(0.32, 0.08), gap 0.24.
	X := mat.NewDense(4, 2, []float64{0.8, 0, -0.8, 0, 0, 0.4, 0, -0.4})
	cases := []struct {
		name string
		step Step
		b    Bounds
		ok   bool
	}{
		{"gap holds", PCA{K: 1}, Bounds{EigenGapMin: 0.23}, true},
		{"gap violated", PCA{K: 1}, Bounds{EigenGapMin: 0.25}, false},
		{"sigma holds", StandardScaler{}, Bounds{SigmaMin: 0.28}, true}, // stds √0.32, √0.08 = 0.566, 0.283
		{"sigma violated", StandardScaler{}, Bounds{SigmaMin: 0.29}, false},
		{"range holds", MinMaxScaler{}, Bounds{RangeMin: 0.8}, true},
		{"range violated", MinMaxScaler{}, Bounds{RangeMin: 0.81}, false},
		{"clusters", Dedup{Eta: 0.1}, Bounds{MaxBall4Eta: 1}, true},
		{"clusters violated", Dedup{Eta: 0.25}, Bounds{MaxBall4Eta: 3}, false}, // 4η = 1 reaches all four
		{"paper clusters", Dedup{Eta: 0.1, PaperBound: true}, Bounds{MaxGoodCluster: 1}, true},
		{"wrong n", PCA{K: 1}, Bounds{N: 5, EigenGapMin: 0.1}, false},
	}
	for _, c := range cases {
		err := Check(c.step, X, c.b)
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !c.ok && !errors.Is(err, ErrOutsideCollection) {
			t.Errorf("%s: err = %v, want ErrOutsideCollection", c.name, err)
		}
	}
	Y := mat.NewDense(3, 2, []float64{0.5, math.NaN(), math.NaN(), math.NaN(), 0.1, 0.2})
	if err := Check(Impute{}, Y, Bounds{MaxMissingRecords: 2, MaxMissingFeatures: 2}); err != nil {
		t.Error(err)
	}
	if err := Check(Impute{}, Y, Bounds{MaxMissingRecords: 1}); !errors.Is(err, ErrOutsideCollection) {
		t.Errorf("p violated: %v", err)
	}
	if err := Check(Impute{}, Y, Bounds{MaxMissingRecords: 2, MaxMissingFeatures: 1}); !errors.Is(err, ErrOutsideCollection) {
		t.Errorf("k violated: %v", err)
	}
	if err := Check(PCA{K: 1}, mat.NewDense(2, 2, []float64{1, 1, 0, 0}), Bounds{}); !errors.Is(err, ErrOutsideCollection) {
		t.Errorf("record outside the unit ball accepted: %v", err)
	}
}

func TestConcentration(t *testing.T) {
	const d = 6
	X := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		X.Set(i, i, 1)
	}
	st := Concentration(X)
	want := math.Sqrt(float64(d-1) / d)
	if math.Abs(st.Diam-math.Sqrt2) > 1e-15 || math.Abs(st.MaxDist-want) > 1e-15 || math.Abs(st.MeanDist-want) > 1e-15 {
		t.Errorf("basis vectors: %+v, want diam √2, distances %v", st, want)
	}
}

// Add/remove neighbours (footnote 5): dedup and quantization change at most
// b_max common records when one record is added.
func TestBruteForceClusterAddRemove(t *testing.T) {
	const eta = 0.08
	gen := clusteredData(eta)
	s := rng.New(8)
	for _, step := range []Step{Dedup{Eta: eta}, Quantize{Eta: eta}} {
		for trial := 0; trial < 2000; trial++ {
			rows, z, _ := gen(s)
			n := len(rows)
			S1, S2 := mat.NewDense(n, 2, nil), mat.NewDense(n+1, 2, nil)
			for i, r := range rows {
				S1.SetRow(i, r)
				S2.SetRow(i, r)
			}
			S2.SetRow(n, z)
			_, r1, _ := step.FitTransform(S1, nil)
			_, r2, _ := step.FitTransform(S2, nil)
			r2.X = r2.X.Slice(0, n, 0, 2).(*mat.Dense)
			r2.Removed = r2.Removed[:min(len(r2.Removed), n)]
			if len(r2.Removed) == 0 {
				r2.Removed = nil
			}
			b := max(naiveMaxBall(S1, 4*eta), naiveMaxBall(S2, 4*eta))
			sens, _ := step.Sensitivity(Bounds{MaxBall4Eta: b, AddRemove: true})
			l2, cnt := measure(r1, r2, -1)
			if l2 > sens.L2+1e-12 || float64(cnt) > sens.LInf {
				t.Fatalf("%s trial %d: measured (%v, %d) > declared (%v, %v)", step.Name(), trial, l2, cnt, sens.L2, sens.LInf)
			}
		}
	}
}

// The practical variant: normalise to C_F, Gaussian mean, centre; the test
// set goes through the same fitted map, which survives JSON.
func TestDPSGDFPractical(t *testing.T) {
	s := rng.New(21)
	X, test := randomMatrix(s, 200, 4, 5), randomMatrix(s, 30, 4, 5)
	X.SetRow(3, []float64{0, 0, 0, 0}) // zero stays zero under normalisation
	cfg := DPSGDF{EpsF: 0.05, Delta: 1e-5, CF: 2}
	res, err := cfg.Fit(X, s)
	if err != nil {
		t.Fatal(err)
	}
	sigma, _ := AnalyticGaussianSigma(0.05, 1e-5)
	if len(res.Events) != 1 || res.Events[0] != (accountant.Gaussian{Sigma: sigma}) {
		t.Fatalf("events %#v, want one Gaussian{%v}", res.Events, sigma)
	}
	if !mat.EqualApprox(res.Centering.Transform(X), res.X, 1e-12) {
		t.Error("fitted centering differs from the training output")
	}
	for i := 0; i < 200; i++ {
		row := append([]float64(nil), res.X.RawRowView(i)...)
		for j := range row {
			row[j] += res.Centering.Mu[j]
		}
		want := 2.0
		if i == 3 {
			want = 0
		}
		if math.Abs(norm(row)-want) > 1e-12 {
			t.Fatalf("row %d: normalised norm %v, want %v", i, norm(row), want)
		}
	}
	raw, _ := json.Marshal(&FittedPipeline{Steps: []Fitted{res.Centering}})
	fp, err := ParseFittedPipeline(raw)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := fp.Transform(test)
	if !mat.Equal(got, res.Centering.Transform(test)) {
		t.Error("centering JSON round trip changes the test transform")
	}
	// Bad configurations are errors, not panics.
	for _, bad := range []DPSGDF{{EpsF: 0, Delta: 1e-5, CF: 1}, {EpsF: 1, Delta: 1e-5, CF: 0}, {Variant: Theory, Epsilon: 1, Delta: 1e-5}, {Variant: 7},
		{Variant: Theory, Epsilon: 1, Delta: 1e-5, R: 10}, // n = 200 ≤ 100·ln 200
	} {
		if _, err := bad.Fit(X, s); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}
