package accountant

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// PerInstanceCaveat is printed with every per-instance RDP number: the
// per-instance account of DP-SGD (each example's own sensitivity
// min(‖g‖, C) at each step, composed with PoissonGaussianRDP at the
// effective multiplier) is a diagnostic, not a bound.
const PerInstanceCaveat = "per-instance RDP of DP-SGD is a DIAGNOSTIC (an odometer): " +
	"summing per-step costs that depend on adaptively chosen iterates is a guarantee only " +
	"under an individual Renyi filter (Feldman & Zrnic 2021) that stops using a record once " +
	"its budget is spent; the values also depend on the data, so aggregates are curator-only"

// Series selects how the RDP of the Poisson-subsampled Gaussian is computed
// at fractional orders, where the binomial expansion becomes an infinite
// series with terms of both signs (Mironov, Talwar & Zhang 2019, §3.3).
type Series int

const (
	// AbsSeries sums the absolute values of the series terms: a proven upper
	// bound on the true RDP (the default here and in dp_accounting since 2024).
	AbsSeries Series = iota
	// SignedSeries sums the terms with their signs, as Opacus and TF Privacy
	// do. It is the exact value when the sum converges, but truncation and
	// cancellation make it a numerical estimate rather than a bound.
	SignedSeries
)

func (s Series) String() string {
	if s == SignedSeries {
		return "signed"
	}
	return "abs"
}

// fracMaxTerms caps the fractional-order series; an order that has not
// converged by then gets RDP +Inf (it is excluded from ε, which stays valid).
const fracMaxTerms = 20000

// fracTailLog stops the series once the newest terms are this far (in log
// space) below the running total and decreasing: e^−36 ≈ 2e−16.
const fracTailLog = 36

// PoissonGaussianRDP writes to dst (grown if needed, and returned) the RDP
// at each order of one run of the Gaussian mechanism with noise multiplier
// sigma on a Poisson subsample of rate q, under the add/remove-one relation
// (Mironov, Talwar & Zhang 2019, "Rényi Differential Privacy of the Sampled
// Gaussian Mechanism"). Integer orders use the exact binomial expansion,
// fractional orders the series selected by series; everything is summed in
// log space so that q ∈ (0,1], σ ∈ [0.1, 100] and orders up to 1024 are stable.
// Each value is then capped by the unsampled Gaussian's α/(2σ²) and by the
// values at higher orders of the same call (RDP is monotone in α); both caps
// are proven bounds and only bind where the absolute-value series is loose
// or the series did not converge.
func PoissonGaussianRDP(dst, orders []float64, q, sigma float64, series Series) ([]float64, error) {
	if !(q >= 0 && q <= 1) {
		return nil, invalidf("sampling probability q must be in [0,1], got %v", q)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, invalidf("noise multiplier sigma must be positive and finite, got %v", sigma)
	}
	dst = grow(dst, len(orders))
	for i, a := range orders {
		if !(a > 1) || math.IsInf(a, 0) {
			return nil, invalidf("rdp order must be finite and > 1, got %v", a)
		}
		switch {
		case q == 0:
			dst[i] = 0
		case q == 1:
			dst[i] = a / (2 * sigma * sigma)
		case a == math.Trunc(a):
			dst[i] = logAInt(q, sigma, int(a)) / (a - 1)
		default:
			la, err := logAFrac(q, sigma, a, series)
			if err != nil {
				return nil, err
			}
			dst[i] = la / (a - 1)
		}
		// Rounding can leave a tiny negative value where the RDP is ~0.
		// Subsampling never hurts: by joint quasi-convexity of the Rényi
		// divergence (van Erven & Harremoës 2014, Thm 13) both directions
		// of the mixture are at most the unsampled Gaussian's α/(2σ²), which
		// also caps a series that converged slowly or not at all (+Inf).
		dst[i] = math.Min(math.Max(dst[i], 0), a/(2*sigma*sigma))
	}
	monotoneEnvelope(dst, orders)
	return dst, nil
}

// monotoneEnvelope lowers each RDP value to the smallest value at any
// order at least as large: Rényi divergence is non-decreasing in the order
// (van Erven & Harremoës 2014, Thm 3), so that is still a valid bound, and
// it removes the looseness of the absolute-value series at fractional orders.
func monotoneEnvelope(rdp, orders []float64) {
	idx := make([]int, len(orders))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(x, y int) int { return cmp.Compare(orders[y], orders[x]) }) // descending
	m := math.Inf(1)
	for _, i := range idx {
		m = math.Min(m, rdp[i])
		rdp[i] = m
	}
}

func grow(dst []float64, n int) []float64 {
	if cap(dst) < n {
		return make([]float64, n)
	}
	return dst[:n]
}

// logAInt is log A_α for integer α ≥ 2 and 0 < q < 1:
//
//	A_α = Σ_{i=0}^{α} C(α,i) q^i (1−q)^{α−i} exp((i²−i)/(2σ²)).
func logAInt(q, sigma float64, alpha int) float64 {
	lq, l1q := math.Log(q), math.Log1p(-q)
	s2 := 2 * sigma * sigma
	logC := 0.0 // log C(α, i), updated incrementally
	terms := make([]float64, alpha+1)
	m := math.Inf(-1)
	for i := 0; i <= alpha; i++ {
		fi := float64(i)
		t := logC + fi*lq + float64(alpha-i)*l1q + (fi*fi-fi)/s2
		terms[i] = t
		m = math.Max(m, t)
		logC += math.Log(float64(alpha-i)) - math.Log(fi+1)
	}
	var s float64
	for _, t := range terms {
		s += math.Exp(t - m)
	}
	return m + math.Log(s)
}

// logAFrac is log A_α for fractional α > 1 and 0 < q < 1, from the series
// of Mironov, Talwar & Zhang 2019 §3.3 that splits the integral at
// z0 = σ² log(1/q − 1) + 1/2:
//
//	A_α = Σ_i C(α,i) [ q^i (1−q)^{α−i} e^{(i²−i)/(2σ²)} · ½erfc((i−z0)/(√2σ))
//	               + q^{α−i} (1−q)^i e^{(j²−j)/(2σ²)} · ½erfc((z0−j)/(√2σ)) ],  j = α−i.
//
// C(α,i) changes sign for i > α; series picks signed or absolute terms.
func logAFrac(q, sigma, alpha float64, series Series) (float64, error) {
	lq, l1q := math.Log(q), math.Log1p(-q)
	s2 := 2 * sigma * sigma
	z0 := sigma*sigma*(math.Log(1/q-1)) + 0.5
	rs := math.Sqrt2 * sigma
	var (
		a0, a1       = math.Inf(-1), math.Inf(-1)
		sg0, sg1     = 1, 1
		last0, last1 = math.Inf(-1), math.Inf(-1)
		logC, signC  = 0.0, 1
	)
	for i := 0; i < fracMaxTerms; i++ {
		fi := float64(i)
		j := alpha - fi
		t0 := logC + fi*lq + j*l1q + (fi*fi-fi)/s2 + logErfc((fi-z0)/rs) - math.Ln2
		t1 := logC + j*lq + fi*l1q + (j*j-j)/s2 + logErfc((z0-j)/rs) - math.Ln2
		sign := 1
		if series == SignedSeries {
			sign = signC
		}
		a0, sg0 = logAddSigned(a0, sg0, t0, sign)
		a1, sg1 = logAddSigned(a1, sg1, t1, sign)
		total, sgt := logAddSigned(a0, sg0, a1, sg1)
		if t0 < last0 && t1 < last1 && math.Max(t0, t1) < total-fracTailLog {
			if sgt < 0 {
				return 0, fmt.Errorf("rdp: signed series for q=%v sigma=%v order %v sums to a negative value", q, sigma, alpha)
			}
			return total, nil
		}
		last0, last1 = t0, t1
		// C(α, i+1) = C(α, i) · (α − i)/(i + 1)
		f := alpha - fi
		if f < 0 {
			signC = -signC
		}
		logC += math.Log(math.Abs(f)) - math.Log(fi+1)
	}
	return math.Inf(1), nil
}
