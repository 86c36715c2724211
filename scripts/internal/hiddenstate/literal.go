package main

import (
	"math"

	"github.com/dptrain/dptrain/accountant"
)

// fig2Mode selects how Fig. 2 evaluates paper 002's Theorem 3.
type fig2Mode int

const (
	// corrected is accountant.RegularizedHiddenState, the proven bound.
	corrected fig2Mode = iota
	// paperLiteral is eq. (21) as printed: radius where a diameter belongs
	// and prefactor b/(n−b). It underestimates θ and is NOT a valid bound;
	// it exists only to redraw the paper's Fig. 2.
	paperLiteral
)

func (m fig2Mode) String() string {
	if m == paperLiteral {
		return "paper-literal (not a bound; Fig. 2 only)"
	}
	return "corrected"
}

// regularized is Theorem 3's δ_T(ε) in one mode: the accountant's bound, or
// the paper-literal reading the accountant does not export.
type regularized struct {
	accountant.RegularizedHiddenState
	Mode fig2Mode
}

// DeltaKappa is δ_T(ε; κ) for one κ > 0, without the cap.
func (r regularized) DeltaKappa(eps, kappa float64) float64 {
	if r.Mode == corrected {
		return r.RegularizedHiddenState.DeltaKappa(eps, kappa)
	}
	T := r.Steps
	if T == 0 {
		return 0
	}
	tail := accountant.ChiSquareTail(r.Dim, kappa*kappa)
	tv := -math.Expm1(float64(T) * math.Log1p(-tail))
	const c = 1.0 // the radius R_t where the diameter 2R_t belongs
	p, lam, eta, C, sigma := r.P, r.Lambda, r.LR, r.Clip, r.Sigma
	rInf := eta*C/lam + sigma*kappa*(1-lam)/lam
	S, rPrev := 0.0, 0.0
	for t := 1; t <= T; t++ {
		Rt := (1-lam)*rPrev + eta*C
		th := accountant.Theta(eps, c*Rt/sigma)
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
	S /= 1 - p // the printed prefactor b/(n−b) instead of p
	return (1+math.Exp(eps))*tv + S
}

// kappas is the accountant's default κ grid.
func (r regularized) kappas() []float64 {
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
func (r regularized) Delta(eps float64) (delta, kappa float64) {
	if r.Mode == corrected {
		return r.RegularizedHiddenState.Delta(eps)
	}
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
