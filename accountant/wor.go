package accountant

import "math"

// WORGaussianRDP writes to dst (grown if needed, and returned) an upper bound
// on the RDP at each order of one run of the Gaussian mechanism with noise
// multiplier sigma (relative to the replace-one L2 sensitivity) on a uniformly
// random subset of exactly b of n records, under the replace-one relation.
//
// It is the general upper bound of Wang, Balle & Kasiviswanathan 2019
// ("Subsampled Rényi Differential Privacy and Analytical Moments Accountant",
// Theorem 9) with the Gaussian's ε(j) = j/(2σ²) and ε(∞) = ∞, for integer
// α ≥ 2 and γ = b/n:
//
//	(α−1)·ε'(α) ≤ log(1 + γ²C(α,2)·min{4(e^{ε(2)}−1), 2e^{ε(2)}}
//	                   + Σ_{j=3}^{α} γ^j C(α,j)·2e^{(j−1)ε(j)}).
//
// Fractional orders interpolate (α−1)ε'(α) linearly between ⌊α⌋ and ⌈α⌉,
// which is an upper bound because (α−1)·D_α is convex in α (WBK 2019,
// Corollary 10; at α < 2 the lower end is (1−1)·ε = 0). The bound is looser
// than WBK's Gaussian-specific Theorem 27 (which dp_accounting uses below
// order 256) but never smaller than the true RDP. Each value is also capped
// by the unsampled Gaussian's α/(2σ²) and by the values at higher orders
// (RDP is monotone in α). With b = n there is no sampling and the exact
// Gaussian RDP is returned.
func WORGaussianRDP(dst, orders []float64, n, b int, sigma float64) ([]float64, error) {
	if n < 1 || b < 1 || b > n {
		return nil, invalidf("sampling without replacement needs 1 <= b <= n, got b=%d n=%d", b, n)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil, invalidf("noise multiplier sigma must be positive and finite, got %v", sigma)
	}
	dst = grow(dst, len(orders))
	gamma := float64(b) / float64(n)
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
			dst[i] = worLogA(gamma, sigma, int(a)) / (a - 1)
			continue
		}
		x := 0.0 // (α−1)ε at α = 1
		if lo >= 2 {
			x = worLogA(gamma, sigma, int(lo))
		}
		y := worLogA(gamma, sigma, int(hi))
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

// worLogA is the log of the WBK Theorem 9 moment bound at integer α ≥ 2.
func worLogA(gamma, sigma float64, alpha int) float64 {
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
		res = logAdd(res, fj*lg+logC+math.Ln2+(fj-1)*eps(fj))
	}
	return res
}
