package objpert

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/rng"
)

// Mode selects the privacy report.
type Mode int

const (
	// DataIndependent is Thm 8 + Thm 9 (Alg 2, DATA-INDEP): post-processing
	// of θ̂ only, zero privacy cost.
	DataIndependent Mode = iota + 1
	// DataDependent is Alg 2 (camera-ready Alg 2(b);
	// docs/per-instance.md#publishable-reports): releases the noisy gradient
	// (Alg 5) and Hessian (Alg 6); needs λ ≥ 2τσ3.
	DataDependent
	// Adaptive is Alg 4: also releases λ_min(H) (Alg 3); works for any λ.
	Adaptive
)

func (m Mode) String() string {
	switch m {
	case DataIndependent:
		return "data-independent"
	case DataDependent:
		return "data-dependent"
	case Adaptive:
		return "adaptive"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ReportOptions configures a report. Sigma2 is the gradient noise (Alg 5),
// Sigma3 the Hessian noise (Alg 6), Sigma4 the λ_min noise (Alg 3), in the
// naming of docs/per-instance.md#publishable-reports.
type ReportOptions struct {
	Mode                   Mode
	Rho                    float64 // failure probability of the bound per record (default 0.05)
	Sigma2, Sigma3, Sigma4 float64
	// TightLogDet also bounds the influence term by log(1 + f''‖x‖²/λ), the
	// corrected Thm 8 (docs/per-instance.md#publishable-reports) valid for any
	// λ; the default is the paper's −log(1 − f''μ̄).
	TightLogDet bool
	GOE         GOEMethod // τ method (default GOEAuto: a proven bound)
}

// Report is the publishable per-instance privacy report ε̃(z) of a model
// released by objective perturbation. Every field is a public value: the
// released θ̂ and its (λ, σ), the report's own noisy releases (ĝ, Ĥ, λ̂) and
// constants. Anyone holding it and their own record z = (x, y) evaluates
// [Report.Epsilon]; with probability ≥ 1 − ρ (over the mechanisms' noise, for
// a fixed z; 1 − 2ρ or 1 − 3ρ for the data-dependent modes, Thm 10/13) the
// value upper-bounds z's exact ex-post pDP.
type Report struct {
	Mode           Mode
	Theta          []float64
	Loss           GLM
	Lambda, Sigma  float64
	Rho, Q         float64 // Q = Φ⁻¹(1−ρ/2)
	Tight          bool
	Sigma2, Sigma3 float64
	Sigma4         float64
	Tau            float64       // λ1(GOE(d)) quantile at 1−ρ/2 (Alg 2/4)
	GOE            GOEMethod     // method τ came from
	GHat           []float64     // Alg 5: ∇J(θ̂;D) + N(0, σ2²I), on a lattice
	HHat           *mat.SymDense // Alg 6: H + (σ3/√2)(Z+Zᵀ), on a lattice
	LambdaHat      float64       // Alg 3: λ_min(H) + N(0, σ4²), on a grid
	LambdaLow      float64       // Alg 4: max{λ, λ̂ − σ4·Q − Slack.MinEig}
	// Slack is what the exact releases change (zero errors for the
	// paper's continuous report): errors added to the tails, sensitivities
	// added to the accounting (docs/per-instance.md#exact-releases).
	Slack Slack

	chol    *mat.Cholesky // of Ĥ (standard) or Ĥ + τσ3 I (regularised); nil: fall back to ‖x‖²/λ
	scale   float64       // multiplies xᵀ(chol)⁻¹x: 3/2 (Alg 2) or the Alg 4 factor
	capLam  float64       // μ̄ ≤ ‖x‖²/capLam: λ (Alg 2) or λ̲ (Alg 4)
	HHatPD  bool          // Ĥ (or its regularised form) was positive definite
	Regular bool          // Alg 4 used the regularised estimator
}

// NewReport builds the report for m. X and y (the training data) are used
// only by the data-dependent modes, and only through their releases, which
// are made in exact arithmetic with noise from s
// (docs/per-instance.md#exact-releases); s may be nil for DataIndependent.
func NewReport(m *Model, X *mat.Dense, y []float64, o ReportOptions, s *rng.Stream) (*Report, error) {
	r, err := newReport(m, o)
	if err != nil || r.Mode == DataIndependent {
		return r, err
	}
	if s == nil {
		return nil, fmt.Errorf("report: the %v report needs a noise stream", r.Mode)
	}
	if err := r.releaseExact(X, y, s); err != nil {
		return nil, err
	}
	return r, r.finish()
}

// newReport validates o and sets up everything but the releases.
func newReport(m *Model, o ReportOptions) (*Report, error) {
	if o.Rho == 0 {
		o.Rho = 0.05
	}
	if !(o.Rho > 0 && o.Rho < 1) {
		return nil, inputf("report: rho must be in (0,1), got %v", o.Rho)
	}
	d := len(m.Theta)
	r := &Report{
		Mode: o.Mode, Theta: append([]float64(nil), m.Theta...), Loss: m.Loss,
		Lambda: m.Lambda, Sigma: m.Sigma, Rho: o.Rho, Q: distuv.UnitNormal.Quantile(1 - o.Rho/2),
		Tight: o.TightLogDet, GOE: o.GOE, scale: 1, capLam: m.Lambda, Slack: idealSlack(m.Loss),
	}
	if o.Mode == DataIndependent {
		return r, nil
	}
	if o.Mode != DataDependent && o.Mode != Adaptive {
		return nil, inputf("report: unknown mode %v", o.Mode)
	}
	if !(o.Sigma2 > 0) || !(o.Sigma3 > 0) || (o.Mode == Adaptive && !(o.Sigma4 > 0)) {
		return nil, inputf("report: %v needs positive sigma2, sigma3 (and sigma4 for adaptive), got %v, %v, %v", o.Mode, o.Sigma2, o.Sigma3, o.Sigma4)
	}
	r.Sigma2, r.Sigma3, r.Sigma4 = o.Sigma2, o.Sigma3, o.Sigma4
	tau, err := GOEQuantile(d, 1-o.Rho/2, o.GOE)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	r.Tau = tau
	if r.GOE == GOEAuto {
		r.GOE = GOERigorous
		if d <= 2 {
			r.GOE = GOEExact
		}
	}
	if o.Mode == DataDependent && m.Lambda < 2*tau*o.Sigma3 {
		return nil, inputf("report: data-dependent mode needs lambda >= 2*tau*sigma3 = %.6g, got lambda = %v (use the adaptive mode or a smaller sigma3)", 2*tau*o.Sigma3, m.Lambda)
	}
	return r, nil
}

// finish sets the estimator of H⁻¹ from the releases. Lemma 20's bound
// ‖Ĥ − H‖₂ ≤ τσ3 (probability 1 − ρ/2) widens by Slack.Hess, and Alg 3's
// λ_min(H) ≥ λ̂ − σ4Q by Slack.MinEig (docs/per-instance.md#exact-releases).
func (r *Report) finish() error {
	ts := r.Tau*r.Sigma3 + r.Slack.Hess
	if r.Mode == DataDependent {
		r.scale = 1.5 // Prop 21, which needs λ ≥ 2ts
		if r.Lambda >= 2*ts {
			r.setChol(r.HHat)
		} // else (only by float slack at the margin): the always-valid ‖x‖²/λ
		return nil
	}
	// Alg 3 + Alg 4.
	r.LambdaLow = math.Max(r.Lambda, r.LambdaHat-r.Sigma4*r.Q-r.Slack.MinEig)
	r.capLam = r.LambdaLow
	if r.LambdaLow >= 2*ts {
		r.scale = (r.LambdaLow + ts) / r.LambdaLow
		r.setChol(r.HHat)
	} else {
		r.Regular = true
		r.scale = (r.LambdaLow + 2*ts) / r.LambdaLow
		d := len(r.Theta)
		reg := mat.NewSymDense(d, nil)
		reg.CopySym(r.HHat)
		for j := 0; j < d; j++ {
			reg.SetSym(j, j, reg.At(j, j)+ts)
		}
		r.setChol(reg)
	}
	return nil
}

// setChol factorises the matrix whose inverse estimates H⁻¹; when it is not
// positive definite (a low-probability event outside Lemma 20's bound) the
// report falls back to the always-valid ‖x‖²/λ.
func (r *Report) setChol(a *mat.SymDense) {
	var ch mat.Cholesky
	if ch.Factorize(a) {
		r.chol, r.HHatPD = &ch, true
	}
}

// Bound is one record's report value with its terms.
type Bound struct {
	MuBar   float64 // upper bound on the leverage xᵀH⁻¹x
	T1      float64 // bound on |T1| (influence)
	T2      float64 // ‖∇ℓ‖²/(2σ²), exact
	GBar    float64 // bound on |∇J(θ̂;D)ᵀ∇ℓ(θ̂;z)|
	Epsilon float64 // ε̄1 = T1 + T2 + GBar/σ²
}

// Epsilon returns ε̄1(z) for z = (x, y): the publishable high-probability
// upper bound on z's ex-post pDP. It is +Inf when f”μ̄ ≥ 1 in the paper's
// form (use TightLogDet to avoid it).
func (r *Report) Epsilon(x []float64, y float64) float64 { return r.Bound(x, y).Epsilon }

// Bound returns ε̄1(z) with its terms.
func (r *Report) Bound(x []float64, y float64) Bound {
	if len(x) != len(r.Theta) {
		panic(fmt.Sprintf("objpert: report of dimension %d asked about x of dimension %d", len(r.Theta), len(x)))
	}
	s := dot(x, r.Theta)
	f1, f2 := r.Loss.D1(s, y), r.Loss.D2(s, y)
	nx2 := dot(x, x)
	gl := math.Abs(f1) * math.Sqrt(nx2) // ‖∇ℓ(θ̂; z)‖
	var b Bound
	b.MuBar = nx2 / r.capLam
	if r.Mode != DataIndependent && r.chol != nil {
		hx := mat.NewVecDense(len(x), nil)
		xv := mat.NewVecDense(len(x), x)
		if err := r.chol.SolveVecTo(hx, xv); err == nil {
			b.MuBar = math.Min(b.MuBar, r.scale*mat.Dot(hx, xv))
		}
	}
	a := f2 * b.MuBar
	b.T1 = math.Inf(1)
	if a < 1 {
		b.T1 = -math.Log1p(-a) // ≥ log(1+a): covers members and non-members
	}
	if r.Tight {
		// |T1| = log(1 + f''xᵀH_small⁻¹x) with H_small ⪰ λI
		// (docs/per-instance.md#publishable-reports).
		b.T1 = math.Min(b.T1, math.Log1p(f2*nx2/r.Lambda))
	}
	b.T2 = gl * gl / (2 * r.Sigma * r.Sigma)
	indep := r.Sigma * gl * r.Q // Thm 9, GLM form
	switch r.Mode {
	case DataIndependent:
		b.GBar = indep
	case DataDependent:
		b.GBar = math.Min(math.Abs(f1*dot(x, r.GHat))+(r.Sigma2*r.Q+r.Slack.Grad)*gl, indep)
	case Adaptive:
		// Alg 4 prints no |·|; without it the bound can undershoot
		// (docs/per-instance.md#publishable-reports). ĝ lies within
		// Slack.Grad of the ideal release: |(ĝ − ∇J − σ2E)ᵀ∇ℓ| ≤ Slack.Grad·‖∇ℓ‖.
		b.GBar = math.Abs(f1*dot(x, r.GHat)) + (r.Sigma2*r.Q+r.Slack.Grad)*gl
	}
	b.Epsilon = b.T1 + b.T2 + b.GBar/(r.Sigma*r.Sigma)
	return b
}

// Overhead is the per-instance privacy cost to z of the report's own
// releases at delta: ε2 (Thm 14, gradient), ε3 (Thm 17, Hessian), ε4
// (Thm 11, λ_min); zero for the releases the mode does not make. These
// depend on z only, so they are publishable.
type Overhead struct{ Eps2, Eps3, Eps4 float64 }

// Total is ε2 + ε3 + ε4 (basic composition; the δ's add too).
func (o Overhead) Total() float64 { return o.Eps2 + o.Eps3 + o.Eps4 }

// Overhead returns z's per-instance cost of the report at delta. With
// the exact releases, z's lattice points lie within Slack.RecordGrad and
// Slack.RecordHess of its exact contributions, and λ̂'s grid adds
// MinEigSens − HessSens, so z's sensitivities grow by those (zero for the
// paper's continuous report).
func (r *Report) Overhead(x []float64, y float64, delta float64) Overhead {
	if r.Mode == DataIndependent {
		return Overhead{}
	}
	s := dot(x, r.Theta)
	nx2 := dot(x, x)
	hx := r.Loss.D2(s, y)*nx2 + r.Slack.RecordHess
	o := Overhead{
		Eps2: GradientPDP(math.Abs(r.Loss.D1(s, y))*math.Sqrt(nx2)+r.Slack.RecordGrad, r.Sigma2, delta),
		Eps3: HessianPDP(hx, r.Sigma3, delta),
	}
	if r.Mode == Adaptive {
		o.Eps4 = MinEigPDP(hx+r.Slack.MinEigSens-r.Slack.HessSens, r.Sigma4, delta)
	}
	return o
}

// Events describes the report's releases as Gaussian mechanisms for the
// run's accountant, at the sensitivities of Slack: for the paper's
// continuous report Alg 5 has sensitivity ξ (noise multiplier σ2/ξ), Alg 6
// is a Gaussian of sensitivity β/√2 on [diag/√2, upper triangle]
// (multiplier √2σ3/β, Thm 17), Alg 3 has sensitivity β (multiplier σ4/β,
// Thm 11); the exact releases widen each (docs/per-instance.md#exact-releases).
// Relation: add/remove-one. It fails when ξ is unbounded (squared loss):
// then the report has no data-independent DP guarantee, only the
// per-instance [Report.Overhead].
func (r *Report) Events() ([]accountant.Event, error) {
	if r.Mode == DataIndependent {
		return nil, nil
	}
	xi, beta := r.Loss.Xi(), r.Loss.Beta()
	if math.IsInf(xi, 0) || math.IsInf(beta, 0) {
		return nil, fmt.Errorf("report: the %s loss has no finite gradient bound, so the gradient release has no DP guarantee (per-instance overheads still hold)", r.Loss.Name())
	}
	sl := r.Slack
	evs := []accountant.Event{
		accountant.Gaussian{Sigma: r.Sigma2 / sl.GradSens},
		accountant.Gaussian{Sigma: math.Sqrt2 * r.Sigma3 / sl.HessSens},
	}
	if r.Mode == Adaptive {
		evs = append(evs, accountant.Gaussian{Sigma: r.Sigma4 / sl.MinEigSens})
	}
	return evs, nil
}

// DP is the report's DP overhead at delta per release by the classical
// Gaussian bound, summed: (Σε_i, k·δ).
func (r *Report) DP(delta float64) ApproxDP {
	out := ApproxDP{Relation: "add-remove", Source: "report releases (Thms 11, 14, 17)"}
	evs, err := r.Events()
	if err != nil {
		out.Epsilon, out.Delta = math.Inf(1), delta
		return out
	}
	for _, ev := range evs {
		out.Epsilon += GaussianEpsilon(1, ev.(accountant.Gaussian).Sigma, delta)
		out.Delta += delta
	}
	return out
}

// ComposedDP composes the report's releases ([Report.Events]) in an RDP
// accountant (Gaussian mechanisms compose exactly in RDP) and converts the
// sum to (ε, δ) at delta, one δ for all releases. It is usually tighter than
// [Report.DP]'s sum of per-release bounds. DataIndependent reports cost
// nothing; an unbounded loss (no finite ξ) returns Events' error.
func (r *Report) ComposedDP(delta float64) (ApproxDP, error) {
	out := ApproxDP{Relation: "add-remove", Source: "report releases (Thms 11, 14, 17) composed by RDP"}
	if r.Mode == DataIndependent {
		return out, nil
	}
	evs, err := r.Events()
	if err != nil {
		return out, err
	}
	acc, err := accountant.NewRDP()
	if err != nil {
		return out, err
	}
	for _, ev := range evs {
		if err := acc.Compose(ev, 1); err != nil {
			return out, fmt.Errorf("report: composing %s: %w", accountant.Kind(ev), err)
		}
	}
	b, err := acc.Epsilon(delta)
	if err != nil {
		return out, fmt.Errorf("report: %w", err)
	}
	out.Epsilon, out.Delta = b.Epsilon, delta
	return out, nil
}

// EpsilonUniform is the data-independent report in Thm 9's general ℓ1 form,
// −log(1 − f”‖x‖²/λ) + ‖∇ℓ‖²/(2σ²) + ‖∇ℓ‖₁·√(2 log(2d/ρ))/σ, which holds
// with probability 1−ρ simultaneously for every z (a union bound over the d
// coordinates of b rather than over users), at the price of √log d.
func (r *Report) EpsilonUniform(x []float64, y float64) float64 {
	s := dot(x, r.Theta)
	f1, f2 := r.Loss.D1(s, y), r.Loss.D2(s, y)
	nx2 := dot(x, x)
	l1 := 0.0
	for _, v := range x {
		l1 += math.Abs(v)
	}
	t1 := math.Inf(1)
	if a := f2 * nx2 / r.Lambda; a < 1 {
		t1 = -math.Log1p(-a)
	}
	if r.Tight {
		t1 = math.Min(t1, math.Log1p(f2*nx2/r.Lambda))
	}
	d := float64(len(x))
	return t1 + f1*f1*nx2/(2*r.Sigma*r.Sigma) + math.Abs(f1)*l1*math.Sqrt(2*math.Log(2*d/r.Rho))/r.Sigma
}
