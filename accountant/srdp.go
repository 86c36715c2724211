package accountant

import "math"

// Smooth RDP (paper 000, Hu, Sanyal & Schölkopf; docs/srdp.md): the privacy of
// a DP algorithm A run on data that a NON-private, data-dependent
// preprocessing π (dedup, quantization, imputation, scaling, PCA) has
// touched. π is described by its sensitivities Δ2 (largest move of any other
// record) and Δ∞ (number of other records that can move); with τ = Δ2·Δ∞,
// Theorem 2 ([SRDPBound]) combines A's RDP ε(α) and its SRDP ε̃(α, τ) into an RDP bound
// for A∘π. In the paper's Tables 1–2 "ε" is a noise knob (σ = Δ/ε), not a
// privacy budget; the constructors here take the noise explicitly.

// SRDPMechanism is one mechanism's RDP curve ε(α) and SRDP curve ε̃(α, τ)
// (Definition 3: sup of D_α over equal-size datasets at L_12 distance ≤ τ).
// Orders may be +Inf (pure-DP mechanisms return finite values there).
type SRDPMechanism interface {
	RDP(alpha float64) float64
	SRDP(alpha, tau float64) float64
}

// GaussianNoiseSRDP is the generic exact primitive of
// docs/srdp.md#mechanism-curves: a statistic of replace-one L2 sensitivity
// Sens and L_12-Lipschitz constant Lip, released with N(0, Sigma²·I), composed
// Count times (Count 0 means 1). RDP = Count·α·Sens²/(2σ²), SRDP =
// Count·α·Lip²·τ²/(2σ²).
type GaussianNoiseSRDP struct {
	Sens, Lip, Sigma float64
	Count            int
}

func (g GaussianNoiseSRDP) n() float64 { return float64(max(g.Count, 1)) }

// RDP is Count·α·Sens²/(2σ²).
func (g GaussianNoiseSRDP) RDP(alpha float64) float64 {
	return g.n() * alpha * g.Sens * g.Sens / (2 * g.Sigma * g.Sigma)
}

// SRDP is Count·α·Lip²τ²/(2σ²).
func (g GaussianNoiseSRDP) SRDP(alpha, tau float64) float64 {
	return g.n() * alpha * g.Lip * g.Lip * tau * tau / (2 * g.Sigma * g.Sigma)
}

// GaussianMechanismSRDP is M_G (Theorem 10): f with global sensitivity sens
// and Lipschitz constant lip w.r.t. ‖·‖_F, plus N(0, σ²).
func GaussianMechanismSRDP(sens, lip, sigma float64) GaussianNoiseSRDP {
	return GaussianNoiseSRDP{Sens: sens, Lip: lip, Sigma: sigma}
}

// DPGDSRDP is A_GD (Theorem 13): T full-batch steps with mean gradient of an
// L-Lipschitz, μ-data-smooth loss (Def. 6) and noise std sigma: per step
// Sens = 2L/n (replace-one) and Lip = μ/n. With σ = L√T/(εn) it gives the
// paper's RDP 2αε² and SRDP αμ²τ²ε²/(2L²).
func DPGDSRDP(n, T int, L, mu, sigma float64) GaussianNoiseSRDP {
	return GaussianNoiseSRDP{Sens: 2 * L / float64(n), Lip: mu / float64(n), Sigma: sigma, Count: T}
}

// PureDPSRDP covers M_L (Theorem 11: Laplace with scale b = Δ_f/ε, Eps = ε,
// SRDPPerTau = L·ε/Δ_f) and M_E (Theorem 12: Eps = ε, SRDPPerTau =
// L_Q·ε/Δ_Q): RDP ε at every order (including ∞), SRDP SRDPPerTau·τ.
type PureDPSRDP struct {
	Eps, SRDPPerTau float64
}

// LaplaceSRDP is M_L: f with sensitivity sens and Lipschitz constant lip, plus Lap(b).
func LaplaceSRDP(sens, lip, b float64) PureDPSRDP {
	return PureDPSRDP{Eps: sens / b, SRDPPerTau: lip / b}
}

// ExponentialSRDP is M_E at parameter eps for a score of sensitivity sensQ
// and Lipschitz constant lipQ.
func ExponentialSRDP(sensQ, lipQ, eps float64) PureDPSRDP {
	return PureDPSRDP{Eps: eps, SRDPPerTau: lipQ * eps / sensQ}
}

// RDP is ε for every order.
func (p PureDPSRDP) RDP(float64) float64 { return p.Eps }

// SRDP is SRDPPerTau·τ for every order.
func (p PureDPSRDP) SRDP(_, tau float64) float64 { return p.SRDPPerTau * tau }

// SGDSampSRDP is A_SGD-samp (Theorem 14, one uniformly sampled point per
// step, σ = L√(cT)/(εn)): RDP α²ε²/2, SRDP αμ²τ²ε²γ²/(2L²) with γ the
// inverse point-wise distance of the collection (Def. 7). When N and T are
// set, orders outside 1 ≤ α ≤ min{√T/ε, (L²T/(ε²n²))·log(n²ε/(L√T))} return
// +Inf (the theorem's range); otherwise the caller vouches for the range, as
// the paper's Table 2 does.
type SGDSampSRDP struct {
	Eps, L, Mu, Gamma float64
	N, T              int
}

func (s SGDSampSRDP) inRange(alpha float64) bool {
	if s.N <= 0 || s.T <= 0 {
		return true
	}
	n, T := float64(s.N), float64(s.T)
	hi := math.Min(math.Sqrt(T)/s.Eps, s.L*s.L*T/(s.Eps*s.Eps*n*n)*math.Log(n*n*s.Eps/(s.L*math.Sqrt(T))))
	return alpha >= 1 && alpha <= hi
}

// RDP is α²ε²/2 inside the range.
func (s SGDSampSRDP) RDP(alpha float64) float64 {
	if !s.inRange(alpha) {
		return math.Inf(1)
	}
	return alpha * alpha * s.Eps * s.Eps / 2
}

// SRDP is αμ²τ²ε²γ²/(2L²) inside the range.
func (s SGDSampSRDP) SRDP(alpha, tau float64) float64 {
	if !s.inRange(alpha) {
		return math.Inf(1)
	}
	return alpha * s.Mu * s.Mu * tau * tau * s.Eps * s.Eps * s.Gamma * s.Gamma / (2 * s.L * s.L)
}

// SRDPBoundAt is the RDP of A∘π at order α for fixed c1, c2 (paper 000's
// Theorem 2, eq. (3), exactly as printed): A∘π is (α, ε̂)-RDP with ε̂ = max(term1(c1), term2(c2)),
//
//	term1 = (αc1−1)/(c1(α−1))·ε̃(αc1, τ) + ε((c1α−1)/(c1−1)),
//	term2 = (αc2−1)/(c2(α−1))·ε(αc2) + ε̃((c2α−1)/(c2−1), τ),
//
// for c1, c2 ≥ 1 (c = 1 uses order ∞) and τ = Δ2·Δ∞.
func SRDPBoundAt(alpha float64, m SRDPMechanism, tau, c1, c2 float64) float64 {
	return math.Max(thm2Term1(alpha, m, tau, c1), thm2Term2(alpha, m, tau, c2))
}

func thm2Order(alpha, c float64) float64 {
	if c <= 1 {
		return math.Inf(1)
	}
	return (c*alpha - 1) / (c - 1)
}

func thm2Term1(alpha float64, m SRDPMechanism, tau, c float64) float64 {
	return (alpha*c-1)/(c*(alpha-1))*m.SRDP(alpha*c, tau) + m.RDP(thm2Order(alpha, c))
}

func thm2Term2(alpha float64, m SRDPMechanism, tau, c float64) float64 {
	return (alpha*c-1)/(c*(alpha-1))*m.RDP(alpha*c) + m.SRDP(thm2Order(alpha, c), tau)
}

// thm2MinC minimises f over c ∈ {1} ∪ (1, 1e4]: a log grid on c−1 then a
// golden-section refinement in log(c−1) around the best grid point.
func thm2MinC(f func(c float64) float64) (best, arg float64) {
	best, arg = f(1), 1
	const lo, hi, steps = -6.0, 4.0, 200 // log10(c−1)
	at := func(u float64) float64 { return f(1 + math.Pow(10, u)) }
	bu, bv := 0.0, math.Inf(1)
	for i := 0; i <= steps; i++ {
		u := lo + (hi-lo)*float64(i)/steps
		if v := at(u); v < bv {
			bu, bv = u, v
		}
	}
	h := (hi - lo) / steps
	a, b := math.Max(bu-h, lo), math.Min(bu+h, hi)
	const gr = 0.6180339887498949
	x1, x2 := b-gr*(b-a), a+gr*(b-a)
	f1, f2 := at(x1), at(x2)
	for i := 0; i < 80 && b-a > 1e-12; i++ {
		if f1 <= f2 {
			b, x2, f2 = x2, x1, f1
			x1 = b - gr*(b-a)
			f1 = at(x1)
		} else {
			a, x1, f1 = x1, x2, f2
			x2 = a + gr*(b-a)
			f2 = at(x2)
		}
	}
	for _, c := range []struct{ u, v float64 }{{bu, bv}, {x1, f1}, {x2, f2}} {
		if c.v < best {
			best, arg = c.v, 1+math.Pow(10, c.u)
		}
	}
	return best, arg
}

// SRDPBound is the RDP of A∘π at order α (paper 000's Theorem 2) with c1
// and c2 each chosen to minimise its term (the default). It returns ε̂ = max of the two minima and
// the minimisers. For Gaussian-type curves (ε = αa²/2, ε̃ = αb²/2) the
// optimum is α(a+b)²/2 (docs/srdp.md#the-combination-rule).
func SRDPBound(alpha float64, m SRDPMechanism, tau float64) (eps, c1, c2 float64) {
	t1, c1 := thm2MinC(func(c float64) float64 { return thm2Term1(alpha, m, tau, c) })
	t2, c2 := thm2MinC(func(c float64) float64 { return thm2Term2(alpha, m, tau, c) })
	return math.Max(t1, t2), c1, c2
}

// GroupPrivacyGaussian is the group-privacy baseline of the paper's Fig. 2
// for a Gaussian mechanism with noise knob ε: α·g²·ε²/2 for a group of g
// records (reconstruction, docs/srdp.md#paper-figures).
func GroupPrivacyGaussian(alpha, eps float64, g int) float64 {
	return alpha * float64(g) * float64(g) * eps * eps / 2
}

// MironovEpsilon is Lemma M (Mironov 2017): min over α ∈ [lo, hi] of
// curve(α) + log(1/δ)/(α−1), by a grid and golden-section refinement; it
// returns ε and the attaining α. Used for the paper's own numbers; the
// accountant itself converts with [EpsilonFromRDP].
func MironovEpsilon(curve func(alpha float64) float64, delta, lo, hi float64) (eps, alpha float64) {
	f := func(a float64) float64 { return curve(a) + math.Log(1/delta)/(a-1) }
	const steps = 400
	bu, bv := lo, math.Inf(1)
	for i := 0; i <= steps; i++ {
		a := lo + (hi-lo)*float64(i)/steps
		if a <= 1 {
			continue
		}
		if v := f(a); v < bv {
			bu, bv = a, v
		}
	}
	h := (hi - lo) / steps
	a, b := math.Max(bu-h, math.Max(lo, 1+1e-12)), math.Min(bu+h, hi)
	const gr = 0.6180339887498949
	x1, x2 := b-gr*(b-a), a+gr*(b-a)
	f1, f2 := f(x1), f(x2)
	for i := 0; i < 100 && b-a > 1e-12*b; i++ {
		if f1 <= f2 {
			b, x2, f2 = x2, x1, f1
			x1 = b - gr*(b-a)
			f1 = f(x1)
		} else {
			a, x1, f1 = x1, x2, f2
			x2 = a + gr*(b-a)
			f2 = f(x2)
		}
	}
	eps, alpha = bv, bu
	if f1 < eps {
		eps, alpha = f1, x1
	}
	if f2 < eps {
		eps, alpha = f2, x2
	}
	return eps, alpha
}

// SubsampledSRDP is Lemma 3 with a conservative fix
// (docs/srdp.md#subsampling-with-replacement): the second
// term uses ε̃(α, B·τ) (with replacement one record can be drawn B times),
// the minimum is taken over every admissible k, and the result is never
// above the no-amplification value ε̃(α, B·τ). When the lemma's hypothesis
// ε̃ ≤ 1/(α−1) fails, the no-amplification value is returned.
func SubsampledSRDP(srdp func(alpha, tau float64) float64, alpha, tau float64, n, B int) (float64, error) {
	if n < 2 || B < 1 || B > n-1 {
		return 0, invalidf("srdp subsampling needs n >= 2 and 1 <= B <= n-1, got n=%d B=%d", n, B)
	}
	noAmp := srdp(alpha, float64(B)*tau)
	if noAmp > 1/(alpha-1) {
		return noAmp, nil
	}
	best := noAmp
	for k := 1; k*B <= n-1; k++ {
		x := math.Pow(1-float64(k*B-1)/float64(n), float64(B))
		if v := 2*x*srdp(alpha, tau/float64(k)) + 2*(1-x)*noAmp; v < best {
			best = v
		}
	}
	return best, nil
}
