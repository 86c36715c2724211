package preprocess

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Normalize rescales every record to L2 norm C: x ← x·C/‖x‖ (DPSGD-F's
// feature normalisation, docs/dpsgdf.md#gaussian-mean). A zero record stays
// zero, which keeps every norm ≤ C. It is record-local: no privacy cost, but
// it is not Lipschitz (near 0), so it cannot follow a data-dependent step in
// an accounted pipeline.
type Normalize struct {
	C float64 `json:"c"`
}

// Name implements Step.
func (Normalize) Name() string { return "normalize" }

// Lipschitz implements RecordLocal: +Inf.
func (Normalize) Lipschitz() float64 { return math.Inf(1) }

// Sensitivity implements Step: zero.
func (Normalize) Sensitivity(Bounds) (Sensitivity, error) {
	return Sensitivity{Formula: "record-local"}, nil
}

// FitTransform implements Step.
func (s Normalize) FitTransform(X *mat.Dense, removed []bool) (Fitted, Result, error) {
	if err := s.validate(); err != nil {
		return nil, Result{}, err
	}
	if err := checkRemoved("normalize", X, removed); err != nil {
		return nil, Result{}, err
	}
	if err := checkFinite("normalize", X, removed); err != nil {
		return nil, Result{}, err
	}
	f := s
	return &f, Result{X: f.Transform(X), Removed: copyRemoved(removed)}, nil
}

// Kind implements Fitted.
func (*Normalize) Kind() string { return "normalize" }

// InDim implements Fitted: any width.
func (*Normalize) InDim() int { return -1 }

// OutDim implements Fitted.
func (*Normalize) OutDim(d int) int { return d }
func (s *Normalize) validate() error {
	if !finitePositive(s.C) {
		return fmt.Errorf("normalize: norm C must be positive and finite, got %v", s.C)
	}
	return nil
}

// Transform implements Fitted.
func (s *Normalize) Transform(X *mat.Dense) *mat.Dense {
	out := mat.DenseCopyOf(X)
	n, _ := X.Dims()
	for i := 0; i < n; i++ {
		row := out.RawRowView(i)
		nr := norm(row)
		if nr == 0 {
			continue
		}
		f := s.C / nr
		for j := range row {
			row[j] *= f
		}
	}
	return out
}

// ProjectBall scales records with norm above Radius onto the ball of that
// radius (Clip(x, R)); 1-Lipschitz, so it may follow a data-dependent step
// (e.g. to bring standardised features back into a ball).
type ProjectBall struct {
	Radius float64 `json:"radius"`
}

// Name implements Step.
func (ProjectBall) Name() string { return "project_ball" }

// Lipschitz implements RecordLocal.
func (ProjectBall) Lipschitz() float64 { return 1 }

// Sensitivity implements Step: zero.
func (ProjectBall) Sensitivity(Bounds) (Sensitivity, error) {
	return Sensitivity{Formula: "record-local"}, nil
}

// FitTransform implements Step.
func (s ProjectBall) FitTransform(X *mat.Dense, removed []bool) (Fitted, Result, error) {
	if err := s.validate(); err != nil {
		return nil, Result{}, err
	}
	if err := checkRemoved("project_ball", X, removed); err != nil {
		return nil, Result{}, err
	}
	f := s
	return &f, Result{X: f.Transform(X), Removed: copyRemoved(removed)}, nil
}

// Kind implements Fitted.
func (*ProjectBall) Kind() string { return "project_ball" }

// InDim implements Fitted: any width.
func (*ProjectBall) InDim() int { return -1 }

// OutDim implements Fitted.
func (*ProjectBall) OutDim(d int) int { return d }
func (s *ProjectBall) validate() error {
	if !finitePositive(s.Radius) {
		return fmt.Errorf("project_ball: radius must be positive and finite, got %v", s.Radius)
	}
	return nil
}

// Transform implements Fitted.
func (s *ProjectBall) Transform(X *mat.Dense) *mat.Dense {
	out := mat.DenseCopyOf(X)
	n, _ := X.Dims()
	for i := 0; i < n; i++ {
		clipTo(out.RawRowView(i), s.Radius)
	}
	return out
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

// clipTo scales v in place to norm at most c (Clip(v, c) of
// docs/dpsgdf.md#theory-variant).
func clipTo(v []float64, c float64) {
	if nr := norm(v); nr > c {
		f := c / nr
		for i := range v {
			v[i] *= f
		}
	}
}
