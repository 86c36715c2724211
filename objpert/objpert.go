package objpert

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dptrain/dptrain/rng"
)

// Normal is a source of standard normal draws (rng's Stream, a
// *math/rand/v2.Rand, ...).
type Normal interface {
	NormFloat64() float64
}

// ErrInput is wrapped by errors caused by the caller's data or parameters.
var ErrInput = errors.New("objpert: invalid input")

func inputf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInput}, args...)...)
}

// Model is a GLM released by objective perturbation (Alg 1):
// Theta = argmin_θ Σ_i f(x_iᵀθ; y_i) + (λ/2)‖θ‖² + bᵀθ with b ~ N(0, σ²I).
// Theta, Loss, Lambda and Sigma are public; the noise b stays with the
// curator (it determines the data's gradient, see [Model.Noise]).
type Model struct {
	Theta  []float64
	Loss   GLM
	Lambda float64
	Sigma  float64

	// Iterations and GradNorm describe the solve: GradNorm is the final
	// ‖∇(J + bᵀθ)‖, which the ex-post formulas assume is zero.
	Iterations int
	GradNorm   float64

	// Released is the public release w·(round(θ̂/w + u) − u) on the grid
	// of spacing Grid shifted by the public Shift u (FitObjPert; nil for a
	// bare [Fit]). Radius is the certified bound on ‖θ̂ − θ*‖₂ (curator
	// only), Tau the public bound on the probability that the release
	// differs from the same rounding of the ideal θ* (docs/secure-noise.md).
	Released []float64
	Grid     float64
	Shift    []float64
	Radius   float64
	Tau      float64

	b []float64
}

// Noise returns a copy of the perturbation b. Curator-only.
func (m *Model) Noise() []float64 { return append([]float64(nil), m.b...) }

// FitObjPert runs Alg 1 with exact noise and releases θ on a shifted grid
// (docs/secure-noise.md, "Objective perturbation"): b is the ideal
// b* ~ N(0, σ²I) rounded to the public step [NoiseStep], the solve is
// certified within r ≤ [RadiusCap] of the ideal minimiser, and Released is
// w·(round(θ̂/w + u) − u) with w = [GridFor](tau) and a public uniform shift
// u drawn from its own child stream. The release is a post-processing of
// the ideal mechanism except on an event of probability at most Tau ≤ tau,
// which [Model.DP] charges to δ. A solve whose certificate exceeds the cap
// is refused (an error; nothing is released).
func FitObjPert(X *mat.Dense, y []float64, loss GLM, lambda, sigma, tau float64, r *rng.Stream) (*Model, error) {
	n, d := X.Dims()
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, inputf("objective perturbation: sigma must be positive and finite, got %v", sigma)
	}
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, inputf("objective perturbation: lambda must be positive and finite, got %v", lambda)
	}
	w, err := GridFor(n, d, sigma, lambda, tau)
	if err != nil {
		return nil, err
	}
	b, err := drawB(d, sigma, r)
	if err != nil {
		return nil, err
	}
	shifts := r.Child("objpert-grid-shift") // public, independent of b
	u := make([]float64, d)
	for j := range u {
		u[j] = shifts.Float64()
	}
	m, err := Fit(X, y, loss, lambda, sigma, b)
	if err != nil {
		return nil, err
	}
	limit := RadiusCap(n, d, sigma, lambda)
	m.Radius = Certify(X, y, loss, lambda, m.Theta, b, NoiseStep(sigma)/2)
	if m.Released, err = roundToGrid(m.Theta, u, w, m.Radius, limit); err != nil {
		return nil, err
	}
	m.Grid, m.Shift, m.Tau = w, u, 2*float64(d)*limit/w
	return m, nil
}

// Fit solves the perturbed objective for a given noise vector b by damped
// Newton's method until the gradient norm stops decreasing (≈1e-13 relative;
// the objective is λ-strongly convex, so the minimiser is unique and the
// θ̂ ↔ b bijection of the ex-post analysis holds). sigma is recorded as the
// scale b was drawn with.
func Fit(X *mat.Dense, y []float64, loss GLM, lambda, sigma float64, b []float64) (*Model, error) {
	n, d := X.Dims()
	if len(y) != n {
		panic(fmt.Sprintf("objpert: %d labels for %d rows", len(y), n))
	}
	if len(b) != d {
		panic(fmt.Sprintf("objpert: noise has dimension %d, data %d", len(b), d))
	}
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, inputf("objective perturbation: lambda must be positive and finite, got %v", lambda)
	}
	if err := checkData(X, y, loss); err != nil {
		return nil, err
	}
	m := &Model{Theta: make([]float64, d), Loss: loss, Lambda: lambda, Sigma: sigma, b: append([]float64(nil), b...)}
	obj := func(th []float64) float64 {
		v := objective(X, y, loss, lambda, th)
		for j := range th {
			v += b[j] * th[j]
		}
		return v
	}
	grad := func(th []float64) []float64 {
		g := Gradient(X, y, loss, lambda, th)
		for j := range g {
			g[j] += b[j]
		}
		return g
	}
	th := m.Theta
	g := grad(th)
	gn := norm(g)
	next := make([]float64, d)
	step := mat.NewVecDense(d, nil)
	const maxIter = 200
	it := 0
	for ; it < maxIter && gn > 0; it++ {
		var ch mat.Cholesky
		if !ch.Factorize(Hessian(X, y, loss, lambda, th)) {
			return nil, fmt.Errorf("objective perturbation: Hessian not positive definite at iteration %d", it)
		}
		if err := ch.SolveVecTo(step, mat.NewVecDense(d, g)); err != nil {
			return nil, fmt.Errorf("objective perturbation: Newton step: %w", err)
		}
		f0 := obj(th)
		dec := mat.Dot(step, mat.NewVecDense(d, g)) // = gᵀH⁻¹g ≥ 0
		t, accepted := 1.0, false
		var gNext []float64
		for k := 0; k < 60; k++ {
			for j := range next {
				next[j] = th[j] - t*step.AtVec(j)
			}
			gNext = grad(next)
			// Armijo on the objective, or (at round-off level, where the
			// objective no longer resolves the decrease) a smaller gradient.
			if obj(next) <= f0-1e-4*t*dec || norm(gNext) < gn {
				accepted = true
				break
			}
			t /= 2
		}
		if !accepted {
			break // no further progress possible in floating point
		}
		copy(th, next)
		gnNext := norm(gNext)
		converged := gnNext >= gn/2 && gnNext < 1e-9*(1+norm(b))
		g, gn = gNext, gnNext
		if converged {
			break // quadratic convergence has hit round-off
		}
	}
	m.Iterations, m.GradNorm = it, gn
	if !(gn < 1e-8*(1+norm(b))) {
		return nil, fmt.Errorf("objective perturbation: Newton stopped at gradient norm %.3g after %d iterations", gn, it)
	}
	return m, nil
}

func checkData(X *mat.Dense, y []float64, loss GLM) error {
	n, d := X.Dims()
	// Messages name the feature, never a value or its row (training data).
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			if v := X.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				return inputf("feature %d has a non-finite value", j)
			}
		}
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return inputf("a label is not finite")
		}
		if _, ok := loss.(Logistic); ok && y[i] != 1 && y[i] != -1 {
			return inputf("logistic labels must be -1 or +1, and a label is neither")
		}
	}
	return nil
}

func objective(X *mat.Dense, y []float64, loss GLM, lambda float64, th []float64) float64 {
	n, _ := X.Dims()
	v := lambda / 2 * dot(th, th)
	for i := 0; i < n; i++ {
		v += loss.F(dot(X.RawRowView(i), th), y[i])
	}
	return v
}

// Gradient returns ∇J(θ; D) = Σ_i f'(x_iᵀθ; y_i)x_i + λθ (r = 0). At the
// released θ̂ it equals −b.
func Gradient(X *mat.Dense, y []float64, loss GLM, lambda float64, th []float64) []float64 {
	n, d := X.Dims()
	g := make([]float64, d)
	for j := range g {
		g[j] = lambda * th[j]
	}
	for i := 0; i < n; i++ {
		x := X.RawRowView(i)
		c := loss.D1(dot(x, th), y[i])
		for j := range g {
			g[j] += c * x[j]
		}
	}
	return g
}

// Hessian returns H = ∇²J(θ; D) = Σ_i f”(x_iᵀθ; y_i)x_i x_iᵀ + λI.
func Hessian(X *mat.Dense, y []float64, loss GLM, lambda float64, th []float64) *mat.SymDense {
	n, d := X.Dims()
	h := mat.NewSymDense(d, nil)
	for i := 0; i < n; i++ {
		x := X.RawRowView(i)
		c := loss.D2(dot(x, th), y[i])
		if c != 0 {
			h.SymRankOne(h, c, mat.NewVecDense(d, x))
		}
	}
	for j := 0; j < d; j++ {
		h.SetSym(j, j, h.At(j, j)+lambda)
	}
	return h
}

// ApproxDP is an (ε, δ) guarantee of a mechanism that is not one of the
// accountant's event types (objective perturbation), for the run's account to
// compose by the basic composition theorem (ε's and δ's add).
type ApproxDP struct {
	Epsilon, Delta float64
	Relation       string // neighbouring relation: "add-remove"
	Source         string // theorem the bound comes from
}

// CalibrateObjPert returns λ and σ for which Alg 1 is (ε, δ)-DP on a GLM
// with ‖∇ℓ‖ ≤ xi and f”‖x‖² ≤ beta (Thm 5 = Kifer et al. 2012 Thm 2):
// λ = 2β/ε and σ = ξ·√(8 log(2/δ) + 4ε)/ε. The paper prints the square
// σ² as "σ" (docs/per-instance.md#objective-perturbation); this is the
// square-root form.
func CalibrateObjPert(eps, delta, xi, beta float64) (lambda, sigma float64, err error) {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, 0, inputf("epsilon must be positive and finite, got %v", eps)
	}
	if !(delta > 0 && delta < 1) {
		return 0, 0, inputf("delta must be in (0,1), got %v", delta)
	}
	if !(xi > 0) || math.IsInf(xi, 0) || !(beta > 0) || math.IsInf(beta, 0) {
		return 0, 0, inputf("objective perturbation needs finite positive bounds xi, beta, got %v, %v", xi, beta)
	}
	return 2 * beta / eps, xi * math.Sqrt(8*math.Log(2/delta)+4*eps) / eps, nil
}

// ObjPertEpsilon is the (ε, δ)-DP of Alg 1 at given λ and σ for a GLM with
// |f'|‖x‖ ≤ xi and f”‖x‖² ≤ beta, from Thm 6 (our derivation,
// docs/per-instance.md#objective-perturbation): the privacy loss is at most c
// + ξ|N(0,1)|/σ with c = −log(1−β/λ) + ξ²/(2σ²), so ε = c + ξΦ⁻¹(1−δ/2)/σ.
// With tight, log(1+β/λ) replaces −log(1−β/λ)
// (docs/per-instance.md#objective-perturbation; valid for any λ > 0). It
// returns +Inf when β ≥ λ (paper form) or ξ = +Inf.
func ObjPertEpsilon(lambda, sigma, xi, beta, delta float64, tight bool) float64 {
	c := xi * xi / (2 * sigma * sigma)
	if tight {
		c += math.Log1p(beta / lambda)
	} else {
		if beta >= lambda {
			return math.Inf(1)
		}
		c -= math.Log1p(-beta / lambda)
	}
	return c + xi*distuv.UnitNormal.Quantile(1-delta/2)/sigma
}

// DP returns Alg 1's guarantee at delta (the derived Thm 6 bound above, in
// the tight log(1+β/λ) form, which is valid for every λ > 0 and never larger
// than the paper's form) for the model's λ and σ and its loss's ξ, β.
func (m *Model) DP(delta float64) ApproxDP {
	eps := ObjPertEpsilon(m.Lambda, m.Sigma, m.Loss.Xi(), m.Loss.Beta(), delta, true)
	return ApproxDP{
		Epsilon:  eps,
		Delta:    GridDelta(eps, delta, m.Tau),
		Relation: "add-remove",
		Source:   "objective perturbation, docs/per-instance.md#objective-perturbation (Thm 6 tail bound), released on a shifted grid (docs/secure-noise.md)",
	}
}

// GridDelta is the δ of a release that equals a post-processing of an
// (ε, δ)-DP mechanism except on an event of probability at most tau:
// δ + (1 + e^ε)·tau (docs/secure-noise.md, "Objective perturbation").
func GridDelta(eps, delta, tau float64) float64 {
	return delta + (1+math.Exp(eps))*tau
}

// modelJSON is the public part of a released model: everything but b.
type modelJSON struct {
	Mechanism string    `json:"mechanism"`
	Loss      string    `json:"loss"`
	Theta     []float64 `json:"theta"`
	Lambda    float64   `json:"lambda"`
	Sigma     float64   `json:"sigma"`
	Grid      float64   `json:"grid,omitempty"`
	Shift     []float64 `json:"shift,omitempty"`
	Tau       float64   `json:"tau,omitempty"`
}

const objPertMechanism = "objective-perturbation"

// MarshalJSON writes the public release: the loss's name, the grid release
// θ̃ with its grid and shift, λ, σ and τ. The perturbation b and the raw
// solve θ̂ are curator-only and never written.
func (m *Model) MarshalJSON() ([]byte, error) {
	if m.Loss == nil {
		return nil, errors.New("objpert: model without a loss")
	}
	if m.Released == nil {
		return nil, errors.New("pdp: only a grid release (FitObjPert) is publishable; the raw solve is not")
	}
	return json.Marshal(modelJSON{Mechanism: objPertMechanism, Loss: m.Loss.Name(), Theta: m.Released, Lambda: m.Lambda, Sigma: m.Sigma,
		Grid: m.Grid, Shift: m.Shift, Tau: m.Tau})
}

// UnmarshalJSON reads a model written by MarshalJSON, checking every value
// (errors wrap [ErrInput]). The perturbation b is not restored: the
// curator's functions recompute it from the data (b = −∇J(θ̂; D)).
func (m *Model) UnmarshalJSON(data []byte) error {
	var j modelJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return inputf("model: %v", err)
	}
	if j.Mechanism != objPertMechanism {
		return inputf("model: mechanism %q, want %q", j.Mechanism, objPertMechanism)
	}
	var loss GLM
	switch j.Loss {
	case Logistic{}.Name():
		loss = Logistic{}
	case Squared{}.Name():
		loss = Squared{}
	default:
		return inputf("model: unknown loss %q (want %s or %s)", j.Loss, Logistic{}.Name(), Squared{}.Name())
	}
	if len(j.Theta) == 0 {
		return inputf("model: theta is empty")
	}
	for i, v := range j.Theta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return inputf("model: theta[%d] is %v", i, v)
		}
	}
	if !(j.Lambda > 0) || math.IsInf(j.Lambda, 0) {
		return inputf("model: lambda must be positive and finite, got %v", j.Lambda)
	}
	if !(j.Sigma > 0) || math.IsInf(j.Sigma, 0) {
		return inputf("model: sigma must be positive and finite, got %v", j.Sigma)
	}
	if !(j.Grid >= 0) || math.IsInf(j.Grid, 0) || !(j.Tau >= 0 && j.Tau < 1) {
		return inputf("model: grid %v and tau %v must be finite and non-negative (tau below 1)", j.Grid, j.Tau)
	}
	if j.Shift != nil && len(j.Shift) != len(j.Theta) {
		return inputf("model: shift has %d values, theta %d", len(j.Shift), len(j.Theta))
	}
	*m = Model{Theta: j.Theta, Released: j.Theta, Loss: loss, Lambda: j.Lambda, Sigma: j.Sigma, Grid: j.Grid, Shift: j.Shift, Tau: j.Tau}
	return nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }
