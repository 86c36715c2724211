package objpert

import "math"

// GLM is the loss ℓ(θ; (x, y)) = f(xᵀθ; y) of a generalized linear model,
// with its first two derivatives in the score s = xᵀθ.
type GLM interface {
	Name() string
	F(s, y float64) float64  // f(s; y)
	D1(s, y float64) float64 // f'(s; y)
	D2(s, y float64) float64 // f''(s; y) ≥ 0
	// Xi bounds ‖∇ℓ‖ = |f'|‖x‖ and Beta bounds f''‖x‖² over the domain
	// ‖x‖ ≤ 1 (|y| ≤ 1); Xi is +Inf when no bound holds.
	Xi() float64
	Beta() float64
}

// Logistic is the logistic loss log(1 + e^{−ys}) with labels y ∈ {−1, +1}:
// ξ = 1, β = 1/4 on the unit ball.
type Logistic struct{}

// Name returns "logreg".
func (Logistic) Name() string { return "logreg" }

// F is log(1 + e^{−ys}), computed without overflow.
func (Logistic) F(s, y float64) float64 {
	m := -y * s
	if m > 0 {
		return m + math.Log1p(math.Exp(-m))
	}
	return math.Log1p(math.Exp(m))
}

// D1 is −y·sigmoid(−ys).
func (Logistic) D1(s, y float64) float64 { return -y * sigmoid(-y*s) }

// D2 is sigmoid(ys)·sigmoid(−ys).
func (Logistic) D2(s, y float64) float64 { return sigmoid(y*s) * sigmoid(-y*s) }

// Xi is 1.
func (Logistic) Xi() float64 { return 1 }

// Beta is 1/4.
func (Logistic) Beta() float64 { return 0.25 }

// Squared is the squared loss (s − y)²/2 of ridge regression. f” = 1, so
// β = 1 on the unit ball; the gradient (s − y)x is bounded only if θ and y
// are, so Xi is +Inf (the paper's "unbounded domain" case, App. B.3).
type Squared struct{}

// Name returns "linreg".
func (Squared) Name() string { return "linreg" }

// F is (s − y)²/2.
func (Squared) F(s, y float64) float64 { return (s - y) * (s - y) / 2 }

// D1 is s − y.
func (Squared) D1(s, y float64) float64 { return s - y }

// D2 is 1.
func (Squared) D2(s, y float64) float64 { return 1 }

// Xi is +Inf: no data-independent gradient bound.
func (Squared) Xi() float64 { return math.Inf(1) }

// Beta is 1.
func (Squared) Beta() float64 { return 1 }

func sigmoid(t float64) float64 {
	if t >= 0 {
		return 1 / (1 + math.Exp(-t))
	}
	e := math.Exp(t)
	return e / (1 + e)
}
