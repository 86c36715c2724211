package preprocess

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Pipeline chains steps: each is fitted on the previous step's output.
//
// Accounting rule (docs/srdp.md#chains, conservative): the paper's
// sensitivities hold for ONE data-dependent step fitted on Hamming neighbours;
// after it, the intermediate datasets differ in up to Δ_∞+1 records and no
// bound for the next fit is proved. So Sensitivity accepts at most one
// data-dependent step, with any number of record-local steps around it (those
// after it scale Δ_2 by their Lipschitz constant). A longer chain needs
// Declared, the user's own sensitivity for the whole chain; otherwise
// Sensitivity returns ErrChain.
type Pipeline struct {
	Steps    []Step
	Declared *Sensitivity
}

// Sensitivity returns what the accountant needs for the whole pipeline. The
// bounds describe the input of the (single) data-dependent step.
func (p Pipeline) Sensitivity(b Bounds) (Sensitivity, error) {
	dep := -1
	count := 0
	for i, s := range p.Steps {
		if _, local := s.(RecordLocal); !local {
			dep, count = i, count+1
		}
	}
	if p.Declared != nil {
		d := *p.Declared
		if !(d.L2 >= 0) || !(d.LInf >= 0) || math.IsInf(d.L2, 0) || math.IsInf(d.LInf, 0) {
			return Sensitivity{}, fmt.Errorf("pipeline: declared sensitivity must be finite and ≥ 0, got L2=%v LInf=%v", d.L2, d.LInf)
		}
		if d.Formula == "" {
			d.Formula = "declared by the user"
		}
		return d, nil
	}
	switch {
	case count == 0:
		return Sensitivity{Formula: "record-local steps only"}, nil
	case count > 1:
		return Sensitivity{}, fmt.Errorf("%w (%d data-dependent steps)", ErrChain, count)
	}
	sens, err := p.Steps[dep].Sensitivity(b)
	if err != nil {
		return Sensitivity{}, err
	}
	lip := 1.0
	for _, s := range p.Steps[dep+1:] {
		lip *= s.(RecordLocal).Lipschitz()
	}
	if math.IsInf(lip, 0) || math.IsNaN(lip) {
		return Sensitivity{}, notAccounted("pipeline", "a record-local step after %s is not Lipschitz", p.Steps[dep].Name())
	}
	if lip != 1 {
		sens.L2 *= lip
		if sens.Removes {
			sens.L2 = math.Max(sens.L2, 1) // ∅ stays at distance 1
		}
		sens.Formula += fmt.Sprintf(" ×%g (Lipschitz after)", lip)
	}
	return sens, nil
}

// Fit fits every step in order on the training rows and returns the fitted
// pipeline and the transformed training set.
func (p Pipeline) Fit(X *mat.Dense) (*FittedPipeline, Result, error) {
	res := Result{X: X}
	fp := &FittedPipeline{}
	for i, s := range p.Steps {
		f, r, err := s.FitTransform(res.X, res.Removed)
		if err != nil {
			return nil, Result{}, fmt.Errorf("pipeline step %d: %w", i, err)
		}
		if f == nil {
			return nil, Result{}, fmt.Errorf("pipeline step %d (%s) returned no fitted step", i, s.Name())
		}
		fp.Steps = append(fp.Steps, f)
		res = r
	}
	return fp, res, nil
}

// FittedPipeline applies the training statistics of every step to new rows.
type FittedPipeline struct {
	Steps []Fitted
}

// Transform applies the fitted steps to X (e.g. the test set). It returns an
// error when X's width does not match what the pipeline was fitted on.
func (f *FittedPipeline) Transform(X *mat.Dense) (*mat.Dense, error) {
	_, d := X.Dims()
	for i, s := range f.Steps {
		if in := s.InDim(); in >= 0 && in != d {
			return nil, fmt.Errorf("pipeline step %d (%s): input has %d features, fitted on %d", i, s.Kind(), d, in)
		}
		X = s.Transform(X)
		_, d = X.Dims()
	}
	if len(f.Steps) == 0 {
		X = mat.DenseCopyOf(X)
	}
	return X, nil
}

type stepJSON struct {
	Kind   string          `json:"kind"`
	Params json.RawMessage `json:"params"`
}

type pipelineJSON struct {
	Version int        `json:"version"`
	Steps   []stepJSON `json:"steps"`
}

var fittedKinds = map[string]func() Fitted{
	"dedup":             func() Fitted { return &identityFitted{} },
	"quantize":          func() Fitted { return &quantizeFitted{} },
	"impute":            func() Fitted { return &imputeFitted{} },
	"impute_regression": func() Fitted { return &regressFitted{} },
	"standard_scaler":   func() Fitted { return &scalerFitted{kind: "standard_scaler"} },
	"minmax_scaler":     func() Fitted { return &scalerFitted{kind: "minmax_scaler"} },
	"pca":               func() Fitted { return &pcaFitted{} },
	"normalize":         func() Fitted { return &Normalize{} },
	"project_ball":      func() Fitted { return &ProjectBall{} },
	"center":            func() Fitted { return &Centering{} },
}

// MarshalJSON writes {"version":1,"steps":[{"kind":..,"params":{..}},..]}.
func (f *FittedPipeline) MarshalJSON() ([]byte, error) {
	out := pipelineJSON{Version: 1, Steps: []stepJSON{}}
	for i, s := range f.Steps {
		raw, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("pipeline step %d (%s): %w", i, s.Kind(), err)
		}
		out.Steps = append(out.Steps, stepJSON{Kind: s.Kind(), Params: raw})
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the form MarshalJSON writes and validates every step
// and the dimensions between consecutive steps.
func (f *FittedPipeline) UnmarshalJSON(data []byte) error {
	var in pipelineJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fmt.Errorf("pipeline json: %w", err)
	}
	if in.Version != 1 {
		return fmt.Errorf("pipeline json: unsupported version %d", in.Version)
	}
	var steps []Fitted
	d := -1
	for i, sj := range in.Steps {
		mk, ok := fittedKinds[sj.Kind]
		if !ok {
			return fmt.Errorf("pipeline json: step %d: unknown kind %q", i, sj.Kind)
		}
		s := mk()
		sd := json.NewDecoder(bytes.NewReader(sj.Params))
		sd.DisallowUnknownFields()
		if err := sd.Decode(s); err != nil {
			return fmt.Errorf("pipeline json: step %d (%s): %w", i, sj.Kind, err)
		}
		if err := s.validate(); err != nil {
			return fmt.Errorf("pipeline json: step %d: %w", i, err)
		}
		if in := s.InDim(); in >= 0 && d >= 0 && in != d {
			return fmt.Errorf("pipeline json: step %d (%s) takes %d features, previous step gives %d", i, sj.Kind, in, d)
		}
		if in := s.InDim(); in >= 0 {
			d = in
		}
		if d >= 0 {
			d = s.OutDim(d)
		}
		steps = append(steps, s)
	}
	f.Steps = steps
	return nil
}

// ParseFittedPipeline decodes a fitted pipeline written by MarshalJSON.
func ParseFittedPipeline(data []byte) (*FittedPipeline, error) {
	var f FittedPipeline
	if err := f.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return &f, nil
}
