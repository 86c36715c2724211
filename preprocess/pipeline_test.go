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

func randomMatrix(s *rng.Stream, n, d int, r float64) *mat.Dense {
	X := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		X.SetRow(i, ballPoint(s, d, r))
	}
	return X
}

func TestPipelineSensitivityRule(t *testing.T) {
	b := Bounds{N: 200, D: 3, SigmaMin: 0.5, MaxBall4Eta: 4, EigenGapMin: 0.1, TopGapMin: 0.1}
	scaler, _ := StandardScaler{}.Sensitivity(b)
	dedup, _ := Dedup{Eta: 0.1}.Sensitivity(b)
	cases := []struct {
		name    string
		p       Pipeline
		want    Sensitivity
		wantErr error
	}{
		{"local only", Pipeline{Steps: []Step{Normalize{C: 1}, ProjectBall{Radius: 1}}}, Sensitivity{}, nil},
		{"one step", Pipeline{Steps: []Step{StandardScaler{}}}, scaler, nil},
		{"local before and 1-Lipschitz after", Pipeline{Steps: []Step{Normalize{C: 1}, StandardScaler{}, ProjectBall{Radius: 1}}}, scaler, nil},
		{"dedup keeps the ∅ distance", Pipeline{Steps: []Step{Dedup{Eta: 0.1}, ProjectBall{Radius: 1}}}, dedup, nil},
		{"non-Lipschitz after", Pipeline{Steps: []Step{StandardScaler{}, Normalize{C: 1}}}, Sensitivity{}, ErrNotAccounted},
		{"chain refused", Pipeline{Steps: []Step{Impute{}, StandardScaler{}, PCA{K: 1}}}, Sensitivity{}, ErrChain},
		{"chain declared", Pipeline{Steps: []Step{Impute{}, StandardScaler{}}, Declared: &Sensitivity{L2: 0.5, LInf: 200}}, Sensitivity{L2: 0.5, LInf: 200}, nil},
	}
	for _, c := range cases {
		got, err := c.p.Sensitivity(b)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) {
				t.Errorf("%s: err = %v, want %v", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.L2 != c.want.L2 || got.LInf != c.want.LInf {
			t.Errorf("%s: got (%v, %v), want (%v, %v)", c.name, got.L2, got.LInf, c.want.L2, c.want.LInf)
		}
	}
	// Halving after the step halves Δ2 (ProjectBall is 1-Lipschitz; a 0.5-Lipschitz local step scales).
	half, err := Pipeline{Steps: []Step{StandardScaler{}, scaleBy(0.5)}}.Sensitivity(b)
	if err != nil || math.Abs(half.L2-scaler.L2/2) > 1e-15 {
		t.Errorf("0.5-Lipschitz after: got %v (%v), want %v", half.L2, err, scaler.L2/2)
	}
}

// scaleBy is a record-local test step x ↦ c·x.
type scaleBy float64

func (scaleBy) Name() string                            { return "scale_by" }
func (c scaleBy) Lipschitz() float64                    { return float64(c) }
func (scaleBy) Sensitivity(Bounds) (Sensitivity, error) { return Sensitivity{}, nil }
func (c scaleBy) FitTransform(X *mat.Dense, removed []bool) (Fitted, Result, error) {
	var out mat.Dense
	out.Scale(float64(c), X)
	return nil, Result{X: &out, Removed: removed}, nil
}

// TestPipelineFitTransformJSON fits a pipeline on training data, checks that
// the test set goes through each step's training statistics, and that the
// JSON round trip transforms identically.
func TestPipelineFitTransformJSON(t *testing.T) {
	s := rng.New(3)
	train, test := randomMatrix(s, 60, 4, 0.7), randomMatrix(s, 15, 4, 0.7)
	train.Set(2, 1, math.NaN())
	test.Set(0, 3, math.NaN())
	p := Pipeline{Steps: []Step{
		Impute{Method: ImputeMedian},
		RegressionImpute{Target: 0, Predictors: []int{2}},
		Quantize{Eta: 0.05},
		StandardScaler{},
		PCA{K: 2, Dim: true},
		ProjectBall{Radius: 3},
	}}
	fp, res, err := p.Fit(train)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := res.X.Dims(); r != 60 || c != 2 {
		t.Fatalf("training output %d×%d, want 60×2", r, c)
	}
	// The training rows pushed through the fitted pipeline reproduce the fit
	// output (no dedup here, so record identity does not matter).
	again, err := fp.Transform(train)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(again, res.X, 1e-12) {
		t.Error("fitted pipeline on the training rows differs from FitTransform's output")
	}
	// Test set: by hand, with the training statistics.
	want := test
	for _, f := range fp.Steps {
		want = f.Transform(want)
	}
	got, err := fp.Transform(test)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got, want) {
		t.Error("pipeline transform differs from applying its steps")
	}
	// The scaler's statistics are the training set's (as it reaches step 3).
	sc := fp.Steps[3].(*scalerFitted)
	_, pre, err := Pipeline{Steps: p.Steps[:3]}.Fit(train)
	if err != nil {
		t.Fatal(err)
	}
	for j := 0; j < 4; j++ {
		col := mat.Col(nil, j, pre.X)
		var m float64
		for _, v := range col {
			m += v / float64(len(col))
		}
		if math.Abs(sc.Shift[j]-m) > 1e-12 {
			t.Errorf("scaler shift %d = %v, training mean %v", j, sc.Shift[j], m)
		}
	}
	raw, err := json.Marshal(fp)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseFittedPipeline(raw)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, raw)
	}
	got2, err := back.Transform(test)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got2, got) {
		t.Error("JSON round trip changes the transform")
	}
	if _, err := fp.Transform(mat.NewDense(2, 3, nil)); err == nil {
		t.Error("wrong width accepted")
	}
}

func TestParseFittedPipelineErrors(t *testing.T) {
	for _, in := range []string{
		``, `{}`, `{"version":2,"steps":[]}`,
		`{"version":1,"steps":[{"kind":"nope","params":{}}]}`,
		`{"version":1,"steps":[{"kind":"impute","params":{"fill":[]}}]}`,
		`{"version":1,"steps":[{"kind":"standard_scaler","params":{"shift":[0],"scale":[0]}}]}`,
		`{"version":1,"steps":[{"kind":"impute","params":{"fill":[1,2]}},{"kind":"pca","params":{"d":3,"rank":true,"components":[[1,0,0]]}}]}`,
		`{"version":1,"steps":[{"kind":"center","params":{"mu":[1],"tau":-1}}]}`,
		`{"version":1,"steps":[{"kind":"impute","params":{"fill":[1],"extra":1}}]}`,
	} {
		if _, err := ParseFittedPipeline([]byte(in)); err == nil {
			t.Errorf("accepted %q", in)
		}
	}
}

func FuzzParseFittedPipeline(f *testing.F) {
	s := rng.New(5)
	fp, _, err := Pipeline{Steps: []Step{Impute{}, Quantize{Eta: 0.1}, MinMaxScaler{}, PCA{K: 1}, Normalize{C: 2}}}.Fit(randomMatrix(s, 20, 3, 1))
	if err != nil {
		f.Fatal(err)
	}
	seed, _ := json.Marshal(fp)
	f.Add(seed)
	f.Add([]byte(`{"version":1,"steps":[{"kind":"center","params":{"mu":[0.5,1],"tau":2}}]}`))
	f.Add([]byte(`{"version":1,"steps":[{"kind":"impute_regression","params":{"d":2,"target":0,"predictors":[1],"beta":[1],"fallback":0}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseFittedPipeline(data)
		if err != nil {
			return
		}
		// A parsed pipeline must apply without panicking to rows of its width,
		// and survive a round trip.
		d := 3
		if len(p.Steps) > 0 && p.Steps[0].InDim() >= 0 {
			d = p.Steps[0].InDim()
		}
		if d > 64 {
			return
		}
		if _, err := p.Transform(mat.NewDense(2, d, nil)); err != nil {
			t.Fatalf("validated pipeline failed on %d columns: %v", d, err)
		}
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseFittedPipeline(raw); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func TestSensitivityPreprocessedEvent(t *testing.T) {
	ev := accountant.Gaussian{Sigma: 1}
	s, _ := Dedup{Eta: 0.1}.Sensitivity(Bounds{MaxBall4Eta: 3})
	p := s.Preprocessed(ev, 0.25)
	if p.Delta2 != 1 || p.DeltaInf != 6 || p.Mu != 1 || p.Event != ev {
		t.Errorf("dedup: %+v, want Δ2 1, Δ∞ 6, Mu raised to 1", p)
	}
	s, _ = StandardScaler{}.Sensitivity(Bounds{N: 100, SigmaMin: 0.5})
	p = s.Preprocessed(ev, 0.25)
	if p.Delta2 != s.L2 || p.DeltaInf != 100 || p.Mu != 0.25 {
		t.Errorf("scaler: %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Error(err)
	}
}
