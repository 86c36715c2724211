package bandmf

import (
	"fmt"
	"math"
)

// Workload is a lower-triangular n×n matrix A of the form
//
//	A[i][j] = Σ_{u=j}^{i} lr_u · β^{u−j}   (i ≥ j),
//
// the map from gradient sums to the iterates of SGD with heavy-ball
// momentum β and step sizes lr (up to the sign and the start point).
// β = 0 and lr ≡ 1 give the prefix sums. Keeping the structure rather than
// the dense matrix makes the error and its gradient O(n²) in time and O(n)
// in memory.
type Workload struct {
	lr   []float64
	beta float64
}

// PrefixSum is the workload of plain SGD at a constant step size over n
// steps: A[i][j] = 1 for i ≥ j.
func PrefixSum(n int) (Workload, error) {
	return Momentum(n, 0, nil)
}

// Momentum is the workload of SGD with momentum beta ∈ [0, 1) and the
// step sizes lr (nil means 1 at every step; otherwise len(lr) = n, each
// finite and positive). Only the ratios of the step sizes matter to the
// strategy.
func Momentum(n int, beta float64, lr []float64) (Workload, error) {
	if n < 1 {
		return Workload{}, fmt.Errorf("bandmf: workload needs n >= 1 steps, got %d", n)
	}
	if !(beta >= 0 && beta < 1) {
		return Workload{}, fmt.Errorf("bandmf: momentum must be in [0, 1), got %v", beta)
	}
	w := Workload{lr: make([]float64, n), beta: beta}
	if lr == nil {
		for i := range w.lr {
			w.lr[i] = 1
		}
		return w, nil
	}
	if len(lr) != n {
		return Workload{}, fmt.Errorf("bandmf: %d step sizes for %d steps", len(lr), n)
	}
	for i, v := range lr {
		if !(v > 0) || math.IsInf(v, 1) {
			return Workload{}, fmt.Errorf("bandmf: step size %d must be finite and positive, got %v", i, v)
		}
	}
	copy(w.lr, lr)
	return w, nil
}

// N is the number of steps.
func (w Workload) N() int { return len(w.lr) }

// Dense returns A row-major, for tests and small n.
func (w Workload) Dense() []float64 {
	n := w.N()
	a := make([]float64, n*n)
	for j := 0; j < n; j++ {
		s, p := 0.0, 1.0
		for i := j; i < n; i++ {
			s += w.lr[i] * p
			a[i*n+j] = s
			p *= w.beta
		}
	}
	return a
}
