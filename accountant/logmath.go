package accountant

import "math"

// logAdd returns log(e^a + e^b).
func logAdd(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// logAddSigned returns (log|x|, sign x) for x = sa·e^a + sb·e^b, with signs
// ±1. A zero result is (−Inf, +1).
func logAddSigned(a float64, sa int, b float64, sb int) (float64, int) {
	if math.IsInf(b, -1) {
		return a, sa
	}
	if math.IsInf(a, -1) {
		return b, sb
	}
	if a < b {
		a, sa, b, sb = b, sb, a, sa
	}
	if sa == sb {
		return a + math.Log1p(math.Exp(b-a)), sa
	}
	if a == b {
		return math.Inf(-1), 1
	}
	return a + math.Log1p(-math.Exp(b-a)), sa
}

// logErfc returns log(erfc(x)), accurate where erfc(x) underflows.
func logErfc(x float64) float64 {
	if x < 26 {
		// math.Erfc has small relative error over this range and its
		// result (≥ 5e-296) is a normal float64.
		return math.Log(math.Erfc(x))
	}
	return logErfcAsymptotic(x)
}

// logErfcAsymptotic is log(erfc(x)) from the asymptotic expansion
// erfc(x) = e^{−x²}/(x√π) · Σ_k (−1)^k (2k−1)!!/(2x²)^k, truncated after k = 4:
// at x ≥ 26 the error is below 1e−12 relative.
func logErfcAsymptotic(x float64) float64 {
	y := 1 / (2 * x * x)
	s := 1 - y*(1-3*y*(1-5*y*(1-7*y)))
	return -x*x - math.Log(x) - 0.5*math.Log(math.Pi) + math.Log(s)
}
