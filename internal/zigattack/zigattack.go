// Package zigattack is the floating-point attack on Gaussian noise drawn by
// Go's math/rand/v2 NormFloat64, for tests: on over 99% of draws the
// ziggurat returns x = float64(j)·float64(wn[i]) for a 32-bit integer j and
// one of 128 table values wn[i], so a released float y = f(c, x) of a true
// value c and a draw x reveals c whenever only the true c can produce y
// from such an x (Mironov 2012, "On significance of the least significant
// bits for differential privacy"). The tests of every noisy release run it
// on their output (docs/secure-noise.md); it draws no noise itself.
package zigattack

import "math"

// Reachable reports whether y = release(x) for some ziggurat fast-path
// output x = j·wn[i]: approx is the draw y implies (the attacker's inverse
// of release, up to rounding); the integers j within 4 of approx/wn[i] are
// tried for each i.
func Reachable(y float64, release func(x float64) float64, approx float64) bool {
	if math.IsNaN(approx) || math.IsInf(approx, 0) {
		return false
	}
	for _, w := range wn {
		j0 := math.Round(approx / float64(w))
		if math.Abs(j0) > 1<<31 {
			continue
		}
		for dj := -4.0; dj <= 4; dj++ {
			j := j0 + dj
			if j < math.MinInt32 || j > math.MaxInt32 {
				continue
			}
			if release(float64(int32(j))*float64(w)) == y {
				return true
			}
		}
	}
	return false
}

// Candidates returns the candidate true values from which y is reachable:
// release(c, x) is the released float for true value c and draw x, and
// approx(c) the draw y implies for c.
func Candidates(y float64, cands []float64, release func(c, x float64) float64, approx func(c float64) float64) []float64 {
	var out []float64
	for _, c := range cands {
		if Reachable(y, func(x float64) float64 { return release(c, x) }, approx(c)) {
			out = append(out, c)
		}
	}
	return out
}

// wn is math/rand/v2's ziggurat table of the same name (normal.go).
var wn = [128]float32{
	1.7290405e-09, 1.2680929e-10, 1.6897518e-10, 1.9862688e-10,
	2.2232431e-10, 2.4244937e-10, 2.601613e-10, 2.7611988e-10,
	2.9073963e-10, 3.042997e-10, 3.1699796e-10, 3.289802e-10,
	3.4035738e-10, 3.5121603e-10, 3.616251e-10, 3.7164058e-10,
	3.8130857e-10, 3.9066758e-10, 3.9975012e-10, 4.08584e-10,
	4.1719309e-10, 4.2559822e-10, 4.338176e-10, 4.418672e-10,
	4.497613e-10, 4.5751258e-10, 4.651324e-10, 4.7263105e-10,
	4.8001775e-10, 4.87301e-10, 4.944885e-10, 5.015873e-10,
	5.0860405e-10, 5.155446e-10, 5.2241467e-10, 5.2921934e-10,
	5.359635e-10, 5.426517e-10, 5.4928817e-10, 5.5587696e-10,
	5.624219e-10, 5.6892646e-10, 5.753941e-10, 5.818282e-10,
	5.882317e-10, 5.946077e-10, 6.00959e-10, 6.072884e-10,
	6.135985e-10, 6.19892e-10, 6.2617134e-10, 6.3243905e-10,
	6.386974e-10, 6.449488e-10, 6.511956e-10, 6.5744005e-10,
	6.6368433e-10, 6.699307e-10, 6.7618144e-10, 6.824387e-10,
	6.8870465e-10, 6.949815e-10, 7.012715e-10, 7.075768e-10,
	7.1389966e-10, 7.202424e-10, 7.266073e-10, 7.329966e-10,
	7.394128e-10, 7.4585826e-10, 7.5233547e-10, 7.58847e-10,
	7.653954e-10, 7.719835e-10, 7.7861395e-10, 7.852897e-10,
	7.920138e-10, 7.987892e-10, 8.0561924e-10, 8.125073e-10,
	8.194569e-10, 8.2647167e-10, 8.3355556e-10, 8.407127e-10,
	8.479473e-10, 8.55264e-10, 8.6266755e-10, 8.7016316e-10,
	8.777562e-10, 8.8545243e-10, 8.932582e-10, 9.0117996e-10,
	9.09225e-10, 9.174008e-10, 9.2571584e-10, 9.341788e-10,
	9.427997e-10, 9.515889e-10, 9.605579e-10, 9.697193e-10,
	9.790869e-10, 9.88676e-10, 9.985036e-10, 1.0085882e-09,
	1.0189509e-09, 1.0296151e-09, 1.0406069e-09, 1.0519566e-09,
	1.063698e-09, 1.0758702e-09, 1.0885183e-09, 1.1016947e-09,
	1.1154611e-09, 1.1298902e-09, 1.1450696e-09, 1.1611052e-09,
	1.1781276e-09, 1.1962995e-09, 1.2158287e-09, 1.2369856e-09,
	1.2601323e-09, 1.2857697e-09, 1.3146202e-09, 1.347784e-09,
	1.3870636e-09, 1.4357403e-09, 1.5008659e-09, 1.6030948e-09,
}
