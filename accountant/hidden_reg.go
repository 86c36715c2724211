package accountant

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// RegularizedHiddenState is paper 002's Theorem 3: DP-SGD with weight decay
// λ and no projection, started at w_0 = 0, only W_T released:
// W_t = (1−λ)W_{t−1} − (η/|B|)ΣClip_C(∇ℓ) + N(0, σ²I_d). The bound is
//
//	δ_T(ε; κ) = (1+e^ε)(1 − (1 − P(χ²_d > κ²))^T) + S_T,
//	S_t = θ_t((1−p)S_{t−1} + p),  θ_t = θ_ε(c·R_t/σ),  R_t = (1−λ)r_{t−1} + ηC,
//	r_t = R_t + σκ,
//
// minimised over the analysis parameter κ and capped by 1 − (1−p)^T. This is
// the corrected reading: θ uses the diameter 2R_t of the ball of radius R_t
// and the Lemma-1 prefactor p. The paper's eq. (21) as printed is NOT a
// bound; scripts/internal/hiddenstate redraws Fig. 2 with it.
type RegularizedHiddenState struct {
	P      float64 // sampling rate (b/n, or the Poisson rate; Poisson is derived, docs/hidden-state.md#regularised-variant)
	LR     float64 // η
	Clip   float64 // C
	Sigma  float64 // noise std in parameter space
	Lambda float64 // weight decay λ in (0,1)
	Dim    int     // d, the exact number of trained parameters
	Steps  int     // T
	// KappaGrid is the set of κ tried; nil uses 0.05, 0.10, …, 30 (and, for
	// d > 400, √d − 5 … √d + 30 in steps of 0.05).
	KappaGrid []float64
}

// Validate checks the parameters.
func (r RegularizedHiddenState) Validate() error {
	switch {
	case !(r.P >= 0 && r.P < 1):
		return invalidf("regularized hidden state: p must be in [0,1), got %v", r.P)
	case !(r.Sigma > 0) || math.IsInf(r.Sigma, 0):
		return invalidf("regularized hidden state: sigma must be positive and finite, got %v", r.Sigma)
	case !(r.Lambda > 0 && r.Lambda < 1):
		return invalidf("regularized hidden state: lambda must be in (0,1), got %v", r.Lambda)
	case !(r.LR >= 0 && r.Clip >= 0) || math.IsInf(r.LR*r.Clip, 0):
		return invalidf("regularized hidden state: lr and clip must be finite and >= 0, got %v, %v", r.LR, r.Clip)
	case r.Dim < 1:
		return invalidf("regularized hidden state: dimension must be >= 1, got %d", r.Dim)
	case r.Steps < 0:
		return invalidf("regularized hidden state: steps must be >= 0, got %d", r.Steps)
	}
	return nil
}

// ChiSquareTail is P(χ²_d > x).
func ChiSquareTail(d int, x float64) float64 {
	if x <= 0 {
		return 1
	}
	return mathext.GammaIncRegComp(float64(d)/2, x/2)
}

// DeltaKappa is δ_T(ε; κ) for one κ > 0, without the cap.
func (r RegularizedHiddenState) DeltaKappa(eps, kappa float64) float64 {
	T := r.Steps
	if T == 0 {
		return 0
	}
	tail := ChiSquareTail(r.Dim, kappa*kappa)
	tv := -math.Expm1(float64(T) * math.Log1p(-tail))
	const c = 2.0 // θ uses the diameter 2R_t of the ball of radius R_t
	p, lam, eta, C, sigma := r.P, r.Lambda, r.LR, r.Clip, r.Sigma
	rInf := eta*C/lam + sigma*kappa*(1-lam)/lam
	S, rPrev := 0.0, 0.0
	for t := 1; t <= T; t++ {
		Rt := (1-lam)*rPrev + eta*C
		th := Theta(eps, c*Rt/sigma)
		if math.Abs(Rt-rInf) <= 1e-12*rInf && t < T {
			// θ is constant from here on: close the geometric recursion.
			k := float64(T - t + 1)
			a := (1 - p) * th
			ak := math.Pow(a, k)
			geom := k
			if a < 1 {
				geom = (1 - ak) / (1 - a)
			}
			S = ak*S + p*th*geom
			break
		}
		S = th * ((1-p)*S + p)
		rPrev = Rt + sigma*kappa
	}
	return (1+math.Exp(eps))*tv + S
}

func (r RegularizedHiddenState) kappas() []float64 {
	if r.KappaGrid != nil {
		return r.KappaGrid
	}
	var g []float64
	for i := 1; i <= 600; i++ {
		g = append(g, 0.05*float64(i))
	}
	if r.Dim > 400 {
		c := math.Sqrt(float64(r.Dim))
		for k := c - 5; k <= c+30; k += 0.05 {
			g = append(g, k)
		}
	}
	return g
}

// Delta is min(min_κ δ_T(ε; κ), 1 − (1−p)^T) and the minimising κ (0 when
// the never-sampled cap wins).
func (r RegularizedHiddenState) Delta(eps float64) (delta, kappa float64) {
	delta = -math.Expm1(float64(r.Steps) * math.Log1p(-r.P))
	for _, k := range r.kappas() {
		if !(k > 0) {
			continue
		}
		if d := r.DeltaKappa(eps, k); d < delta {
			delta, kappa = d, k
		}
	}
	return delta, kappa
}

// Epsilon returns an ε at which the bound was verified ≤ delta: the
// smallest point of a 0.1 grid, refined on a 0.01 grid below it (the bound
// is not monotone in ε, so no bisection;
// docs/hidden-state.md#regularised-variant), up to epsMax = 50. +Inf when no
// grid point verifies.
func (r RegularizedHiddenState) Epsilon(delta float64) float64 {
	ok := func(e float64) bool { d, _ := r.Delta(e); return d <= delta }
	for i := 0; i <= 500; i++ {
		e := 0.1 * float64(i)
		if !ok(e) {
			continue
		}
		for j := 1; j < 10 && i > 0; j++ {
			f := 0.1*float64(i-1) + 0.01*float64(j)
			if ok(f) {
				return f
			}
		}
		return e
	}
	return math.Inf(1)
}
