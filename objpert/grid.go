package objpert

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/rng"
)

// Objective perturbation's exact release (docs/secure-noise.md, "Objective
// perturbation"): b is the ideal Gaussian b* rounded to a public step γ_b by
// the exact sampler, the float solve is certified to lie within r of the
// ideal minimiser θ*, and θ̂ is released rounded to a public grid with a
// public random shift. The release equals the same rounding of θ* unless θ*
// falls within the public radius cap of a cell boundary, an event of
// probability at most τ = 2d·cap/w that the guarantee adds to δ.

// bStepBits is log2(σ/γ_b): b is exact to 2⁻⁵⁰ of σ, well inside the
// sampler's range σ/γ_b ≤ 2⁵².
const bStepBits = 50

// NoiseStep is the public step γ_b of b: the power of two with σ/γ_b in
// [2⁴⁹, 2⁵⁰).
func NoiseStep(sigma float64) float64 {
	_, e := math.Frexp(sigma) // σ ∈ [2^(e−1), 2^e)
	return math.Ldexp(1, e-bStepBits)
}

// RadiusCap is the public cap on the certified distance ‖θ̂ − θ*‖₂ for n
// records of d features: 2⁻⁴⁶(n + σ√d + 1)/λ. It covers the certified
// float error of the gradient (about 2⁻⁴⁸ per record of |f'|‖x‖ ≤ 1,
// docs/secure-noise.md), the solver's residual and ‖b − b*‖ ≤ √d·γ_b/2
// with room to spare; a solve whose certificate exceeds it is refused.
func RadiusCap(n, d int, sigma, lambda float64) float64 {
	return math.Ldexp(float64(n)+sigma*math.Sqrt(float64(d))+1, -46) / lambda
}

// GridFor is the public grid spacing w for a rounding budget tau: the
// smallest power of two with 2d·cap/w ≤ tau, so that the boundary event has
// probability at most tau.
func GridFor(n, d int, sigma, lambda, tau float64) (float64, error) {
	if !(tau > 0 && tau < 1) {
		return 0, inputf("objective perturbation: rounding budget tau must be in (0,1), got %v", tau)
	}
	_, e := math.Frexp(2 * float64(d) * RadiusCap(n, d, sigma, lambda) / tau)
	return math.Ldexp(1, e), nil
}

// drawB returns b = γ_b·round(b*/γ_b), b* ~ N(0, σ²I), drawn exactly: the
// sampler returns round((σ/γ_b)·N) for an exact standard normal N, so
// |b_j − b*_j| ≤ γ_b/2 for every coordinate of every draw.
func drawB(d int, sigma float64, r *rng.Stream) ([]float64, error) {
	gamma := NoiseStep(sigma)
	cn, err := lattice.NewCountNoise(sigma / gamma) // exact: γ_b is a power of two
	if err != nil {
		return nil, fmt.Errorf("objective perturbation: %w", err)
	}
	b := make([]float64, d)
	for j := range b {
		k, err := cn.Release(0, r)
		if err != nil {
			return nil, fmt.Errorf("objective perturbation: noise draw: %w", err)
		}
		b[j] = float64(k) * gamma // |k| < 2⁵³ except with probability below exp(−2⁵), exact
	}
	return b, nil
}

// unitRound is the unit roundoff 2⁻⁵³, padded by 1% for the higher-order
// terms of the error bounds below.
const unitRound = 0x1p-53 * 1.01

// curvatureBound bounds |f”| everywhere, for the error of f' at a score
// computed with error: 1/4 for the logistic loss, 1 for the squared loss.
func curvatureBound(loss GLM) float64 {
	if _, ok := loss.(Logistic); ok {
		return 0.25
	}
	return 1
}

// Certify returns a rigorous upper bound r on ‖θ − θ*‖₂, where θ* minimises
// J_D(θ) + b*ᵀθ for any b* with ‖b − b*‖∞ ≤ bErr: by λ-strong convexity
// ‖θ − θ*‖ ≤ ‖∇J_D(θ) + b*‖/λ ≤ (‖∇J_D(θ) + b‖ + √d·bErr)/λ, and the
// gradient is evaluated in float with a bound on its error (pairwise sums,
// docs/secure-noise.md).
func Certify(X *mat.Dense, y []float64, loss GLM, lambda float64, theta, b []float64, bErr float64) float64 {
	n, d := X.Dims()
	L := curvatureBound(loss)
	terms := make([][]float64, d) // per coordinate: the summands of ∇J + b
	abs := make([]float64, d)     // Σ|summand|
	slack := make([]float64, d)   // Σ bound on each summand's own error
	for j := range terms {
		terms[j] = make([]float64, 0, n+2)
		terms[j] = append(terms[j], lambda*theta[j], b[j])
		abs[j] = math.Abs(lambda*theta[j]) + math.Abs(b[j])
		slack[j] = unitRound * math.Abs(lambda*theta[j])
	}
	for i := 0; i < n; i++ {
		x := X.RawRowView(i)
		s, sa := 0.0, 0.0
		for k := range x {
			s += x[k] * theta[k]
			sa += math.Abs(x[k] * theta[k])
		}
		ds := float64(d+1) * unitRound * sa // recursive dot product
		c := loss.D1(s, y[i])
		// f' to 16 ulps, plus the score's error through |f”| ≤ L.
		dc := 16*unitRound*math.Abs(c) + L*ds + 0x1p-1070
		for j, v := range x {
			t := c * v
			terms[j] = append(terms[j], t)
			abs[j] += math.Abs(t)
			slack[j] += unitRound*math.Abs(t) + dc*math.Abs(v)
		}
	}
	depth := 1.0
	for m := n + 2; m > 1; m = (m + 1) / 2 {
		depth++
	}
	g2, e2 := 0.0, 0.0
	for j := range terms {
		g := pairwise(terms[j])
		e := depth*unitRound*(abs[j]+slack[j]) + slack[j]
		a := math.Abs(g) + e
		g2 += a * a
		e2 += bErr * bErr
	}
	// √ and the sums of squares round too: 1 + (d+4)u covers them.
	grow := 1 + float64(d+8)*unitRound
	return (math.Sqrt(g2)*grow + math.Sqrt(e2)*grow) * grow / lambda
}

// pairwise sums v by halves: the error is at most ⌈log₂ len⌉·u·Σ|v_i|.
func pairwise(v []float64) float64 {
	switch len(v) {
	case 0:
		return 0
	case 1:
		return v[0]
	}
	h := len(v) / 2
	return pairwise(v[:h]) + pairwise(v[h:])
}

// roundToGrid releases θ̃_j = w·(round(θ_j/w + u_j) − u_j). It fails when
// the certified radius r plus the float error of θ_j/w + u_j exceeds the
// cap for some coordinate: then the rounding of θ* is not guaranteed equal
// on the complement of the boundary event the cap defines.
func roundToGrid(theta, shift []float64, w, r, limit float64) ([]float64, error) {
	out := make([]float64, len(theta))
	for j, v := range theta {
		t := v/w + shift[j] // v/w exact (w a power of two), one rounding in +
		if slack := r + w*0x1p-52*(math.Abs(t)+1); !(slack <= limit) {
			return nil, fmt.Errorf("objective perturbation: certified distance %.3g to the ideal minimiser exceeds the public cap %.3g; refusing to release", slack, limit)
		}
		out[j] = w * (math.Round(t) - shift[j]) // Round is exact
	}
	return out, nil
}
