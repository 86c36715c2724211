package objpert

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// GaussianExPost is the exact ex-post pDP of the Gaussian mechanism
// o = Q(D) + N(0, σ²I) (Thm 22): |‖Δ‖²/(2σ²) − Δᵀ(o − Q(D))/σ²| with
// Δ = Q(D±z) − Q(D). CURATOR-ONLY: it needs the realised noise o − Q(D).
func GaussianExPost(delta, noise []float64, sigma float64) float64 {
	if len(delta) != len(noise) {
		panic("objpert: GaussianExPost: length mismatch")
	}
	s2 := sigma * sigma
	return math.Abs(dot(delta, delta)/(2*s2) - dot(delta, noise)/s2)
}

// GaussianPDP is the (ε, δ)-pDP of the Gaussian mechanism with per-instance
// sensitivity sens (Cor 23): sens²/(2σ²) + sens·Φ⁻¹(1−δ)/σ.
func GaussianPDP(sens, sigma, delta float64) float64 {
	return sens*sens/(2*sigma*sigma) + sens*distuv.UnitNormal.Quantile(1-delta)/sigma
}

// GaussianEpsilon is the classical (looser) form of Cor 23, used by
// Thms 11, 14 and 17: sens²/(2σ²) + sens·√(2 log(1/δ))/σ.
func GaussianEpsilon(sens, sigma, delta float64) float64 {
	return sens*sens/(2*sigma*sigma) + sens*math.Sqrt(2*math.Log(1/delta))/sigma
}

// GaussianExPostBound bounds the ex-post pDP with probability 1−ρ over the
// noise (Cor 23, eq. 5): sens²/(2σ²) + sens·Φ⁻¹(1−ρ/2)/σ. It depends on the
// data only through sens, so it is publishable when sens is.
func GaussianExPostBound(sens, sigma, rho float64) float64 {
	return sens*sens/(2*sigma*sigma) + sens*distuv.UnitNormal.Quantile(1-rho/2)/sigma
}

// GaussianExPostBoundLoose is eq. (5)'s looser form with √(2 log(2/ρ)).
func GaussianExPostBoundLoose(sens, sigma, rho float64) float64 {
	return sens*sens/(2*sigma*sigma) + sens*math.Sqrt(2*math.Log(2/rho))/sigma
}

// GaussianSigmaFor inverts GaussianEpsilon: the σ at which sensitivity sens
// costs eps at delta, σ = sens/(√(c²+2ε) − c) with c = √(2 log(1/δ)).
func GaussianSigmaFor(eps, sens, delta float64) float64 {
	c := math.Sqrt(2 * math.Log(1/delta))
	// √(c²+2ε) − c written without cancellation.
	return sens * (math.Sqrt(c*c+2*eps) + c) / (2 * eps)
}

// MinEigPDP is the pDP of Alg 3 (Thm 11): releasing λ_min(H) + N(0, σ4²) has
// per-instance sensitivity f”‖x‖² (Weyl), so ε4 = GaussianEpsilon(f”‖x‖², σ4, δ).
func MinEigPDP(hx, sigma4, delta float64) float64 { return GaussianEpsilon(hx, sigma4, delta) }

// GradientPDP is the pDP of Alg 5 (Thm 14.1): ε2 = GaussianEpsilon(‖∇ℓ(θ̂;z)‖, σ2, δ).
// Alg 5's box prints log(2/δ); Thm 14 (used here) has log(1/δ).
func GradientPDP(gradNorm, sigma2, delta float64) float64 {
	return GaussianEpsilon(gradNorm, sigma2, delta)
}

// GradientExPost is Thm 14.2: with probability 1−ρ the ex-post pDP of Alg 5
// is at most ‖∇ℓ‖²/(2σ2²) + ‖∇ℓ‖√(2 log(2/ρ))/σ2.
func GradientExPost(gradNorm, sigma2, rho float64) float64 {
	return GaussianExPostBoundLoose(gradNorm, sigma2, rho)
}

// HessianPDP is the pDP of Alg 6, the symmetric ("GOE") Analyze-Gauss
// (Thm 17): ε3 = ‖H_x‖_F²/(4σ3²) + ‖H_x‖_F√(2 log(1/δ))/(√2σ3), i.e. a
// Gaussian mechanism of sensitivity ‖H_x‖_F/√2. For a GLM ‖H_x‖_F = f”‖x‖².
func HessianPDP(hxFrob, sigma3, delta float64) float64 {
	return GaussianEpsilon(hxFrob/math.Sqrt2, sigma3, delta)
}

// AnalyzeGaussEpsilon is the DP of standard Analyze-Gauss (Dwork et al. 2014,
// i.i.d. noise on the upper triangle) with ‖H_x‖_F ≤ beta: a Gaussian
// mechanism of sensitivity β. The GOE variant ([HessianPDP]) costs less.
func AnalyzeGaussEpsilon(beta, sigma, delta float64) float64 {
	return GaussianEpsilon(beta, sigma, delta)
}

// Cor16Sigma is Cor 16's Hessian noise for a target ε < 1:
// σ = (ρmax/ε)√(2 log(1.25/δ)), ρmax = sup‖H_x‖_F.
func Cor16Sigma(eps, delta, rhoMax float64) float64 {
	return rhoMax / eps * math.Sqrt(2*math.Log(1.25/delta))
}

// Cor16PDP is Cor 16's pDP of the Hessian release at Cor16Sigma:
// ε²h²/(8ρmax² log(1.25/δ)) + εh/(ρmax√2), h = f”‖x‖².
func Cor16PDP(hx, eps, delta, rhoMax float64) float64 {
	return eps*eps*hx*hx/(8*rhoMax*rhoMax*math.Log(1.25/delta)) + eps*hx/(rhoMax*math.Sqrt2)
}
