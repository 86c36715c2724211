package accountant

import (
	"math"
)

// Propose-Test-Release for non-private PCA followed by DP-GD (paper 000
// Algorithm 1, Theorem 8, Proposition 9; docs/srdp.md#ptr-for-pca): the SRDP
// guarantee of PCA is conditional on an eigengap lower bound β; PTR tests it
// privately and makes the guarantee unconditional at the price of +ε.

// PCARankTau is τ = n·Δ2 of rank-k PCA (Proposition 5): 4(3n+2)/((n−1)·gap),
// gap the eigengap lower bound (≤ 12.2/gap for n ≥ 101).
func PCARankTau(n int, gap float64) float64 {
	return 4 * float64(3*n+2) / (float64(n-1) * gap)
}

// PTRSurrogateStatistic is the tractable substitute for Algorithm 1's
// distance-to-instability statistic (docs/srdp.md#ptr-for-pca):
// J'(S) = max(0, (δ_k(S) − β)·n/12.2). For n ≥ 101 neighbouring datasets
// change δ_k by at most 12.2/n, so J' has global sensitivity 1 and J' ≤ J,
// which is all Theorem 8's proof needs. gap is δ_k(S) = λ_k − λ_{k+1} of the
// data's covariance (preprocess computes it).
func PTRSurrogateStatistic(gap, beta float64, n int) float64 {
	return math.Max(0, (gap-beta)*float64(n)/12.2)
}

// PTRPCADecide is Algorithm 1's test: release (train on the PCA-projected
// data) iff J'(S) + Lap(1/ε) > log(2/δ)/ε. lap1 must be a draw from the
// standard Laplace distribution (scale 1) from a cryptographically seeded
// stream; it is scaled by 1/ε here. It returns the noisy statistic Γ too.
func PTRPCADecide(gap, beta float64, n int, eps, delta, lap1 float64) (release bool, gamma float64, err error) {
	if n < 101 {
		return false, 0, invalidf("ptr for pca needs n >= 101, got %d", n)
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		return false, 0, invalidf("ptr epsilon must be positive and finite, got %v", eps)
	}
	if !(delta > 0 && delta < 1) {
		return false, 0, invalidf("ptr delta must be in (0,1), got %v", delta)
	}
	if !(beta > 0) || math.IsNaN(gap) {
		return false, 0, invalidf("ptr needs beta > 0 and a finite eigengap, got beta=%v gap=%v", beta, gap)
	}
	gamma = PTRSurrogateStatistic(gap, beta, n) + lap1/eps
	return gamma > math.Log(2/delta)/eps, gamma, nil
}

// LaplaceFromUniform maps u ∈ (0,1) to a standard Laplace draw (inverse CDF).
func LaplaceFromUniform(u float64) float64 {
	if u < 0.5 {
		return math.Log(2 * u)
	}
	return -math.Log(2 * (1 - u))
}

// PTRPCAResult is Theorem 8 for Algorithm 1.
type PTRPCAResult struct {
	// EpsHat is Theorem 8's ε̂ = 3ε√(1.05(1+K)log(1/δ)), K = 12.2²μ²/(L²β²).
	EpsHat float64
	// Total is the algorithm's overall ε̂ + ε (the PTR test costs ε).
	Total float64
	// AlphaStar = √(log(1/δ)/A) + 1 with A = 1.05ε²(1+K).
	AlphaStar float64
	// Valid reports whether Theorem 8 is proven at these parameters: its
	// 1.05 factor needs α* ≥ 11 and its δ condition δ ≤ exp(−A)
	// (docs/srdp.md#ptr-for-pca). When false, use [PTRPCANumeric].
	Valid bool
	// Exact is 2√(A·log(1/δ)) + A, Lemma M at α* before the paper's 3√ relaxation.
	Exact float64
}

// PTRPCAClosedForm is the closed-form ε of Algorithm 1 (paper 000's
// Theorem 8, evaluated as printed; a bound only where Valid) for an
// L-Lipschitz, μ-smooth loss, PTR budget ε, target δ and eigengap lower
// bound β.
func PTRPCAClosedForm(eps, beta, delta, L, mu float64) PTRPCAResult {
	K := 12.2 * 12.2 * mu * mu / (L * L * beta * beta)
	A := 1.05 * eps * eps * (1 + K)
	lg := math.Log(1 / delta)
	r := PTRPCAResult{
		EpsHat:    3 * eps * math.Sqrt(1.05*(1+K)*lg),
		AlphaStar: math.Sqrt(lg/A) + 1,
		Exact:     2*math.Sqrt(A*lg) + A,
	}
	r.Total = r.EpsHat + eps
	r.Valid = r.AlphaStar >= 11 && lg >= A
	return r
}

// PTRPCANumeric is the exact numeric path for Algorithm 1
// (docs/srdp.md#ptr-for-pca): DP-GD with σ = 2L√T/(εn) has total RDP αε²/2
// and, on PCA-rank data with τ = PCARankTau(n, β), total SRDP α(μτε/(2L))²/2;
// Theorem 2 with optimal c gives α(a+b)²/2 (a = ε, b = μτε/(2L)); Lemma M
// minimised over α; plus ε for the PTR test. It returns the overall ε and the
// attaining order.
func PTRPCANumeric(eps, beta, delta, L, mu float64, n int) (total, alpha float64) {
	tau := PCARankTau(n, beta)
	m := GaussianNoiseSRDP{Sens: eps, Lip: mu * eps / (2 * L), Sigma: 1}
	curve := func(a float64) float64 {
		e, _, _ := SRDPBound(a, m, tau)
		return e
	}
	e, a := MironovEpsilon(curve, delta, 1.01, 200)
	return e + eps, a
}

// PTRFailureProbability is the failure probability of the PTR test (paper
// 000's Proposition 9), ξ = (1/(2δ))·exp(−(δ_k(S) − β)·n·ε/12.2), doubled
// when the test threshold is log(2/δ)/ε as in Algorithm 1
// (docs/srdp.md#ptr-for-pca). It also reports the precondition δ_k ≥ β +
// 12.2·log(1/δ)/(nε) of the proof's tail step.
func PTRFailureProbability(gap, beta float64, n int, eps, delta float64, log2Threshold bool) (xi float64, preconditionHolds bool) {
	xi = math.Exp(-(gap-beta)*float64(n)*eps/12.2) / (2 * delta)
	if log2Threshold {
		xi *= 2
	}
	return xi, gap >= beta+12.2*math.Log(1/delta)/(float64(n)*eps)
}
