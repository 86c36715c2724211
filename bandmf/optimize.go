package bandmf

import (
	"fmt"

	"gonum.org/v1/gonum/optimize"
)

// Report says what an optimisation cost and what it gained.
type Report struct {
	Bands       int     // b of the returned strategy
	Steps       int     // n, the workload's length
	Error       float64 // the returned strategy's Error
	DPSGDError  float64 // the identity's Error, ‖A‖²_F
	Evaluations int     // objective evaluations, each O(n²) time and O(n) memory
	Iterations  int     // L-BFGS major iterations
}

// Optimize returns the b-banded Toeplitz strategy with the least Error for
// w that L-BFGS finds from the better of two starts: the identity (DP-SGD)
// and the b leading coefficients of the square root of the prefix-sum
// matrix, (1−x)^{−1/2} = Σ binom(2k,k)/4ᵏ·xᵏ. b is capped at n. The
// result is never worse than either start; the minimum is local (the
// objective is not convex in c), which costs accuracy, not privacy: any
// C is private at its own sensitivity.
func Optimize(w Workload, bands int) (Strategy, Report, error) {
	n := w.N()
	if bands < 1 {
		return Strategy{}, Report{}, fmt.Errorf("bandmf: bands must be >= 1, got %d", bands)
	}
	bands = min(bands, n)
	rep := Report{Bands: bands, Steps: n, DPSGDError: Identity().Error(w)}
	if bands == 1 {
		rep.Error = rep.DPSGDError
		return Identity(), rep, nil
	}
	sqrtStart := make([]float64, bands-1)
	r := 1.0
	for k := 1; k < bands; k++ {
		r *= float64(2*k-1) / float64(2*k)
		sqrtStart[k-1] = r
	}
	start := sqrtStart
	if objective(w, sqrtStart, nil) > rep.DPSGDError {
		start = make([]float64, bands-1)
	}
	prob := optimize.Problem{
		Func: func(x []float64) float64 { return objective(w, x, nil) },
		Grad: func(grad, x []float64) { objective(w, x, grad) },
	}
	res, err := optimize.Minimize(prob, start, &optimize.Settings{
		GradientThreshold: 1e-12,
		MajorIterations:   1000,
		Converger:         &optimize.FunctionConverge{Relative: 1e-12, Iterations: 20},
	}, &optimize.LBFGS{})
	x := start
	if res != nil {
		rep.Evaluations = res.Stats.FuncEvaluations + res.Stats.GradEvaluations
		rep.Iterations = res.Stats.MajorIterations
		if res.F < objective(w, start, nil) {
			x = res.X
		}
	}
	if err != nil && res == nil {
		return Strategy{}, rep, fmt.Errorf("bandmf: optimising %d bands over %d steps: %w", bands, n, err)
	}
	c := append([]float64{1}, x...)
	s, err := NewStrategy(c)
	if err != nil {
		return Strategy{}, rep, err
	}
	rep.Error = s.Error(w)
	return s, rep, nil
}
