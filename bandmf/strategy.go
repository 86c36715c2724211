package bandmf

import (
	"fmt"
	"math"
)

// Strategy is a b-banded lower-triangular Toeplitz matrix C:
// C[i][j] = Coef[i−j] for 0 ≤ i−j < b = len(Coef), zero elsewhere.
// Coef[0] = 1 fixes the scale (the mechanism's noise is calibrated to C's
// column norm, so only the ratios matter). b = 1 is the identity: DP-SGD.
type Strategy struct {
	coef []float64
}

// NewStrategy checks coef (c₀ = 1, every coefficient finite) and returns
// the strategy; the slice is copied.
func NewStrategy(coef []float64) (Strategy, error) {
	if len(coef) == 0 {
		return Strategy{}, fmt.Errorf("bandmf: a strategy needs at least one band")
	}
	if coef[0] != 1 {
		return Strategy{}, fmt.Errorf("bandmf: the diagonal coefficient must be 1, got %v", coef[0])
	}
	for k, v := range coef {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Strategy{}, fmt.Errorf("bandmf: coefficient %d is not finite (%v)", k, v)
		}
	}
	return Strategy{coef: append([]float64(nil), coef...)}, nil
}

// Identity is the 1-banded strategy: independent noise, DP-SGD.
func Identity() Strategy { return Strategy{coef: []float64{1}} }

// Bands is b, the number of nonzero diagonals.
func (s Strategy) Bands() int { return len(s.coef) }

// Coef returns a copy of the coefficients c₀…c_{b−1}.
func (s Strategy) Coef() []float64 { return append([]float64(nil), s.coef...) }

// ColumnNorm is the L2 norm of column j of the n×n matrix C: the bands
// that fit above row n.
func (s Strategy) ColumnNorm(n, j int) float64 {
	m := min(len(s.coef), n-j)
	ss := 0.0
	for k := 0; k < m; k++ {
		ss += s.coef[k] * s.coef[k]
	}
	return math.Sqrt(ss)
}

// MaxColumnNorm is the largest column norm, ‖c‖₂ (column 0's, when n ≥ b).
func (s Strategy) MaxColumnNorm(n int) float64 { return s.ColumnNorm(n, 0) }

// Dense returns the n×n matrix C row-major, for tests and small n.
func (s Strategy) Dense(n int) []float64 {
	c := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for k := 0; k < len(s.coef) && k <= i; k++ {
			c[i*n+i-k] = s.coef[k]
		}
	}
	return c
}

// inverse returns the first n coefficients of C⁻¹, itself lower-triangular
// Toeplitz: d₀ = 1, d_m = −Σ_{k=1}^{min(m,b−1)} c_k·d_{m−k}.
func (s Strategy) inverse(n int) []float64 {
	d := make([]float64, n)
	d[0] = 1 / s.coef[0]
	for m := 1; m < n; m++ {
		acc := 0.0
		for k := 1; k < len(s.coef) && k <= m; k++ {
			acc += s.coef[k] * d[m-k]
		}
		d[m] = -acc / s.coef[0]
	}
	return d
}

// Sensitivity is the L2 sensitivity of C·x to one example that takes part
// in the given steps (each contributing a gradient of norm at most 1):
// √(Σ_{j,l} |⟨C_j, C_l⟩|), a bound in general and exact when the steps
// are at least b apart (the columns are then orthogonal and the sum is
// Σ_j ‖C_j‖²). Steps must be distinct, in [0, n).
func (s Strategy) Sensitivity(n int, steps []int) (float64, error) {
	seen := make(map[int]bool, len(steps))
	for _, t := range steps {
		if t < 0 || t >= n {
			return 0, fmt.Errorf("bandmf: step %d outside [0, %d)", t, n)
		}
		if seen[t] {
			return 0, fmt.Errorf("bandmf: step %d listed twice", t)
		}
		seen[t] = true
	}
	ss := 0.0
	for _, j := range steps {
		for _, l := range steps {
			ss += math.Abs(s.inner(n, j, l))
		}
	}
	return math.Sqrt(ss), nil
}

// inner is ⟨C_j, C_l⟩ for the n×n matrix.
func (s Strategy) inner(n, j, l int) float64 {
	if j > l {
		j, l = l, j
	}
	acc := 0.0
	// Row r holds c[r−j] in column j and c[r−l] in column l.
	for r := l; r < n && r-j < len(s.coef); r++ {
		acc += s.coef[r-j] * s.coef[r-l]
	}
	return acc
}

// Separated reports whether every two steps are at least b apart, the
// condition under which one example's columns are orthogonal.
func (s Strategy) Separated(steps []int) bool {
	for i, j := range steps {
		for _, l := range steps[i+1:] {
			if d := l - j; d < len(s.coef) && d > -len(s.coef) {
				return false
			}
		}
	}
	return true
}
