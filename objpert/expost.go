package objpert

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ExPostTerms is the exact ex-post per-instance privacy loss of one record
// (Cor 7 / Alg 1x), with its three signed terms:
// ε1 = |T1 + T2 + T3|, T1 = log det H − log det H_{±z} (influence),
// T2 = ‖∇ℓ(θ̂;z)‖²/(2σ²), T3 = ±∇J(θ̂;D)ᵀ∇ℓ(θ̂;z)/σ² (fit).
type ExPostTerms struct {
	Score, D1, D2 float64 // s = xᵀθ̂, f'(s; y), f''(s; y)
	Leverage      float64 // μ(x) = xᵀH⁻¹x with H = ∇²J(θ̂; D)
	T1, T2, T3    float64
	Epsilon       float64 // |T1 + T2 + T3|
}

// ExPost computes the exact ex-post pDP of every (x, y) in Z against the
// training data (X, y): member[k] says whether Z's row k belongs to the
// training set (remove neighbour) or not (add neighbour).
//
// CURATOR-ONLY: the result depends on the whole data set and must never be
// published (Example 4 of the paper recovers a count from it). Publish a
// [Report] instead.
//
// The gradient ∇J(θ̂; D) is computed from the data (it equals −b at the exact
// minimiser), so ExPost also serves for a θ̂ that was not produced by Fit,
// with b implied by the first-order condition.
func (m *Model) ExPost(X *mat.Dense, y []float64, Z *mat.Dense, zy []float64, member []bool) ([]ExPostTerms, error) {
	n, d := X.Dims()
	k, dz := Z.Dims()
	if dz != d || len(zy) != k || len(member) != k || len(y) != n || len(m.Theta) != d {
		panic(fmt.Sprintf("objpert: ExPost shapes: X %dx%d, y %d, Z %dx%d, zy %d, member %d, theta %d", n, d, len(y), k, dz, len(zy), len(member), len(m.Theta)))
	}
	if err := checkData(Z, zy, m.Loss); err != nil {
		return nil, err
	}
	var ch mat.Cholesky
	if !ch.Factorize(Hessian(X, y, m.Loss, m.Lambda, m.Theta)) {
		return nil, fmt.Errorf("ex-post pDP: Hessian not positive definite")
	}
	g := Gradient(X, y, m.Loss, m.Lambda, m.Theta)
	out := make([]ExPostTerms, k)
	hx := mat.NewVecDense(d, nil)
	s2 := m.Sigma * m.Sigma
	for i := 0; i < k; i++ {
		x := Z.RawRowView(i)
		t := ExPostTerms{Score: dot(x, m.Theta)}
		t.D1 = m.Loss.D1(t.Score, zy[i])
		t.D2 = m.Loss.D2(t.Score, zy[i])
		if err := ch.SolveVecTo(hx, mat.NewVecDense(d, x)); err != nil {
			return nil, fmt.Errorf("ex-post pDP: %w", err)
		}
		t.Leverage = mat.Dot(hx, mat.NewVecDense(d, x))
		a := t.D2 * t.Leverage
		gx := t.D1 * dot(g, x) // ∇J(θ̂;D)ᵀ∇ℓ(θ̂;z)
		if member[i] {
			// det(H − f''xxᵀ) = det H · (1 − a) (Lemma 25).
			t.T1 = -math.Log1p(-a)
			t.T3 = -gx / s2
		} else {
			t.T1 = -math.Log1p(a)
			t.T3 = gx / s2
		}
		t.T2 = t.D1 * t.D1 * dot(x, x) / (2 * s2)
		t.Epsilon = math.Abs(t.T1 + t.T2 + t.T3)
		out[i] = t
	}
	return out, nil
}

// ExPostTraining is ExPost for every training record (all members).
func (m *Model) ExPostTraining(X *mat.Dense, y []float64) ([]ExPostTerms, error) {
	n, _ := X.Dims()
	member := make([]bool, n)
	for i := range member {
		member[i] = true
	}
	return m.ExPost(X, y, X, y, member)
}
