package bandmf

import "math"

// Error is the total squared error of the released workload per unit of
// noise multiplier: ‖C‖²_col · ‖A·C⁻¹‖²_F, where ‖C‖_col is C's largest
// column norm (the sensitivity of one participation). The noise the
// mechanism adds has standard deviation σ·clip·‖C‖_col per coordinate of
// C·x, so the workload's error is B·z with B = A·C⁻¹. For the identity
// (DP-SGD) it is ‖A‖²_F. The cost is O(n²) time and O(n) memory.
func (s Strategy) Error(w Workload) float64 {
	f, _ := s.errorGrad(w, false)
	cn := s.MaxColumnNorm(w.N())
	return cn * cn * f
}

// errorGrad returns F = ‖A·C⁻¹‖²_F and, when grad is set, ∂F/∂c_k for
// k = 0…b−1.
//
// With D = C⁻¹ (coefficients d) and A = P·diag(lr)·M_β (P the prefix sums,
// M_β[u][j] = β^{u−j}), A·D's column j is the running sum
// M[i][j] = Σ_{u=j}^{i} lr_u·e_{u−j} of e = M_β·d (e_r = d_r + β·e_{r−1}).
// Reverse mode: ∂F/∂e_r = 2·Σ_j lr_{j+r}·R_j(j+r), R_j(u) = Σ_{i≥u} M[i][j];
// ∂F/∂d_p = Σ_{r≥p} β^{r−p}·∂F/∂e_r; and since ∂D/∂c_k = −S_k·D² (S_k
// the k-th shift; lower-triangular Toeplitz matrices commute),
// ∂F/∂c_k = −Σ_{m≥k} ∂F/∂d_m · (d⊛d)_{m−k}.
func (s Strategy) errorGrad(w Workload, grad bool) (float64, []float64) {
	n := w.N()
	d := s.inverse(n)
	e := make([]float64, n)
	for r := range e {
		e[r] = d[r]
		if r > 0 {
			e[r] += w.beta * e[r-1]
		}
	}
	col := make([]float64, n)
	var ge []float64
	if grad {
		ge = make([]float64, n)
	}
	f := 0.0
	for j := 0; j < n; j++ {
		m := col[:n-j]
		acc := 0.0
		for i := range m {
			acc += w.lr[j+i] * e[i]
			m[i] = acc
			f += acc * acc
		}
		if !grad {
			continue
		}
		// Suffix sums R_j(j+r), accumulated from the bottom row up.
		suf := 0.0
		for r := len(m) - 1; r >= 0; r-- {
			suf += m[r]
			ge[r] += 2 * w.lr[j+r] * suf
		}
	}
	if !grad {
		return f, nil
	}
	gd := make([]float64, n)
	for p := n - 1; p >= 0; p-- {
		gd[p] = ge[p]
		if p+1 < n {
			gd[p] += w.beta * gd[p+1]
		}
	}
	// d⊛d, the coefficients of C⁻²: invert c⊛c, which has 2b−1 terms.
	cc := convolve(s.coef, s.coef)
	d2 := make([]float64, n)
	d2[0] = 1 / cc[0]
	for m := 1; m < n; m++ {
		acc := 0.0
		for k := 1; k < len(cc) && k <= m; k++ {
			acc += cc[k] * d2[m-k]
		}
		d2[m] = -acc / cc[0]
	}
	g := make([]float64, len(s.coef))
	for k := range g {
		acc := 0.0
		for m := k; m < n; m++ {
			acc += gd[m] * d2[m-k]
		}
		g[k] = -acc
	}
	return f, g
}

func convolve(a, b []float64) []float64 {
	out := make([]float64, len(a)+len(b)-1)
	for i, x := range a {
		for j, y := range b {
			out[i+j] += x * y
		}
	}
	return out
}

// objective is the scale-free error with c₀ = 1 and x = (c₁…c_{b−1}):
// g(x) = (1 + ‖x‖²)·F(c), and its gradient. It uses ‖c‖ for the column norm
// (the first n−b+1 columns' norm; n ≥ b).
func objective(w Workload, x, grad []float64) float64 {
	c := make([]float64, len(x)+1)
	c[0] = 1
	copy(c[1:], x)
	s := Strategy{coef: c}
	f, gf := s.errorGrad(w, grad != nil)
	nn := 1.0
	for _, v := range x {
		nn += v * v
	}
	if grad != nil {
		for k := range x {
			grad[k] = 2*x[k]*f + nn*gf[k+1]
		}
	}
	if math.IsNaN(f) {
		return math.Inf(1)
	}
	return nn * f
}
