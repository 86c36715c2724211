package accountant

import (
	"math"
	"math/big"
)

// WORGaussianRDP writes to dst (grown if needed, and returned) an upper bound
// on the RDP at each order of one run of the Gaussian mechanism with noise
// multiplier sigma (relative to the replace-one L2 sensitivity) on a uniformly
// random subset of exactly b of n records, under the replace-one relation.
//
// Up to order 256 it is Wang, Balle & Kasiviswanathan's bound for the
// subsampled Gaussian (2019, "Subsampled Rényi Differential Privacy and
// Analytical Moments Accountant", Theorem 27; dp_accounting uses it too):
// for integer α ≥ 2 and γ = b/n,
//
//	(α−1)·ε'(α) ≤ log(1 + γ²C(α,2)·min{4(e^{ε(2)}−1), 2e^{ε(2)}}
//	                   + Σ_{j=3}^{α} γ^j C(α,j)·min{4·√(Δ^{2⌊j/2⌋}·Δ^{2⌈j/2⌉}), 2e^{(j−1)ε(j)}}),
//
// with ε(j) = j/(2σ²) and Δ^ℓ the ℓ-th forward difference at 0 of
// f(x) = e^{(x−1)ε(x)} (computed exactly in high precision). Above order
// 256 the differences are dropped, which leaves the bound of their general
// Theorem 9 (any mechanism; looser). Fractional orders interpolate
// (α−1)ε'(α) linearly between ⌊α⌋ and ⌈α⌉,
// which is an upper bound because (α−1)·D_α is convex in α (WBK 2019,
// Corollary 10; at α < 2 the lower end is (1−1)·ε = 0). Each value is also
// capped by the unsampled Gaussian's α/(2σ²) and by the values at higher
// orders (RDP is monotone in α). With b = n there is no sampling and the
// exact Gaussian RDP is returned.
func WORGaussianRDP(dst, orders []float64, n, b int, sigma float64) ([]float64, error) {
	if n < 1 || b < 1 || b > n {
		return nil, invalidf("sampling without replacement needs 1 <= b <= n, got b=%d n=%d", b, n)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, invalidf("noise multiplier sigma must be positive and finite, got %v", sigma)
	}
	dst = grow(dst, len(orders))
	gamma := float64(b) / float64(n)
	diffs := worForwardDiffs(sigma, worMaxExactOrder)
	for i, a := range orders {
		if !(a > 1) || math.IsInf(a, 0) {
			return nil, invalidf("rdp order must be finite and > 1, got %v", a)
		}
		if b == n {
			dst[i] = a / (2 * sigma * sigma)
			continue
		}
		lo, hi := math.Floor(a), math.Ceil(a)
		if lo == hi {
			dst[i] = worLogA(gamma, sigma, int(a), diffs) / (a - 1)
			continue
		}
		x := 0.0 // (α−1)ε at α = 1
		if lo >= 2 {
			x = worLogA(gamma, sigma, int(lo), diffs)
		}
		y := worLogA(gamma, sigma, int(hi), diffs)
		t := a - lo
		dst[i] = ((1-t)*x + t*y) / (a - 1)
	}
	for i, a := range orders {
		// Both datasets' outputs are mixtures over the same subsets with
		// the same weights, so by joint quasi-convexity (van Erven &
		// Harremoës 2014, Thm 13) the unsampled Gaussian also bounds them.
		dst[i] = math.Min(dst[i], a/(2*sigma*sigma))
	}
	monotoneEnvelope(dst, orders)
	return dst, nil
}

// worMaxExactOrder is the largest order at which the Gaussian-specific
// terms are used (as dp_accounting does).
const worMaxExactOrder = 256

// worLogA is the log of the moment bound at integer α ≥ 2: Theorem 27's
// terms up to worMaxExactOrder (where diffs, the log forward differences,
// are known), Theorem 9's above or when diffs is nil.
func worLogA(gamma, sigma float64, alpha int, diffs []float64) float64 {
	s2 := 2 * sigma * sigma
	eps := func(j float64) float64 { return j / s2 } // Gaussian RDP at order j
	lg := math.Log(gamma)
	fa := float64(alpha)
	e2 := eps(2)
	// log(e^{ε(2)} − 1) without cancellation for small ε(2).
	lem1 := math.Log(math.Expm1(e2))
	logC := math.Log(fa * (fa - 1) / 2) // C(α, 2)
	res := logAdd(0, 2*lg+logC+math.Min(math.Log(4)+lem1, math.Ln2+e2))
	for j := 3; j <= alpha; j++ {
		fj := float64(j)
		logC += math.Log(fa-fj+1) - math.Log(fj) // C(α, j) from C(α, j−1)
		t := math.Ln2 + (fj-1)*eps(fj)
		if diffs != nil && alpha <= worMaxExactOrder {
			lo, hi := diffs[2*(j/2)], diffs[2*((j+1)/2)]
			t = math.Min(t, math.Log(4)+0.5*(lo+hi))
		}
		res = logAdd(res, fj*lg+logC+t)
	}
	return res
}

// worForwardDiffs returns log Δ^ℓ for even ℓ ≤ maxOrder (+Inf for odd ℓ
// and where unknown), Δ^ℓ = Σ_i (−1)^{ℓ−i} C(ℓ,i) f(i) the ℓ-th forward
// difference at 0 of f(x) = e^{c·x(x−1)}, c = 1/(2σ²). The even ones are
// moments E[(W−1)^ℓ] ≥ 0 of a log-normal W, and for large σ the
// alternating sum cancels almost all of its terms' magnitude, so it is
// formed in binary floating point of up to 4096 bits, more only where
// fewer do not resolve it; where even 4096 bits' rounding error could
// reach a quarter of the result the value is +Inf (the caller's min then
// falls back to the general term).
func worForwardDiffs(sigma float64, maxOrder int) []float64 {
	out := make([]float64, maxOrder+1)
	todo := make([]bool, maxOrder+1)
	for l := range out {
		out[l] = math.Inf(1)
		todo[l] = l%2 == 0
	}
	c := 1 / (2 * sigma * sigma)
	for _, prec := range []uint{320, 1024, 4096} {
		f := worPowers(c, prec, maxOrder)
		for l := range out {
			if !todo[l] {
				continue
			}
			sum := new(big.Float).SetPrec(prec)
			mag := new(big.Float).SetPrec(prec)
			binom := new(big.Int).SetInt64(1) // C(l, i)
			t := new(big.Float).SetPrec(prec)
			for i := 0; i <= l; i++ {
				t.SetInt(binom)
				t.Mul(t, f[i])
				mag.Add(mag, t)
				if (l-i)%2 == 1 {
					t.Neg(t)
				}
				sum.Add(sum, t)
				binom.Mul(binom, big.NewInt(int64(l-i)))
				binom.Quo(binom, big.NewInt(int64(i+1)))
			}
			// Each of the ~3l+3 roundings (and f's own) errs by at most
			// 2^−prec of a magnitude below mag.
			errBound := new(big.Float).SetMantExp(mag, -int(prec)+4+bitsLen(3*l+3+2*maxOrder))
			abs := new(big.Float).Abs(sum)
			if abs.Cmp(errBound.Mul(errBound, big.NewFloat(4))) <= 0 {
				continue
			}
			mant := new(big.Float)
			exp := abs.MantExp(mant)
			m, _ := mant.Float64()
			out[l], todo[l] = math.Log(m)+float64(exp)*math.Ln2, false
		}
	}
	return out
}

// worPowers returns f(i) = e^{c·i(i−1)} for i = 0..n at precision prec:
// g = e^{2c} by its Taylor series at 2c/2^k squared k times, then
// f(i) = f(i−1)·g^{i−1}.
func worPowers(c float64, prec uint, n int) []*big.Float {
	k := 0
	for x := 2 * c; x > 1e-3; x /= 2 {
		k++
	}
	x := new(big.Float).SetPrec(prec).SetFloat64(2 * c)
	x.SetMantExp(x, -k)
	g := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for i := int64(1); term.Sign() != 0 && term.MantExp(nil) > -int(prec)-8; i++ {
		term.Mul(term, x)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(i))
		g.Add(g, term)
	}
	for range k {
		g.Mul(g, g)
	}
	f := make([]*big.Float, n+1)
	f[0] = new(big.Float).SetPrec(prec).SetInt64(1)
	pw := new(big.Float).SetPrec(prec).SetInt64(1)
	for i := 1; i <= n; i++ {
		f[i] = new(big.Float).SetPrec(prec).Mul(f[i-1], pw)
		pw = new(big.Float).SetPrec(prec).Mul(pw, g)
	}
	return f
}

func bitsLen(n int) int {
	b := 0
	for n > 0 {
		b++
		n >>= 1
	}
	return b
}
