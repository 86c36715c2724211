package accountant

import (
	"fmt"
	"math"
)

// minBalleOrder is the smallest order at which the Balle et al. conversion is
// used: log1p(−1/α) and 1/(α−1) lose precision as α → 1, and the bound is
// useless there anyway (dp_accounting uses the same cut-off).
const minBalleOrder = 1.01

// EpsilonFromRDP converts an RDP curve to the smallest ε such that the
// mechanism is (ε, delta)-DP, and returns the order that attains it.
//
// For each order α with RDP value r it uses Balle, Barthe, Gaboardi, Hsu &
// Sato 2020 ("Hypothesis testing interpretations and Rényi differential
// privacy", Prop. 12 / Thm. 21):
//
//	ε(α) = r + log1p(−1/α) − log(δ·α)/(α−1)
//
// and, as a second valid bound, ε = 0 whenever δ ≥ sqrt(1 − e^{−r}): the total
// variation distance is at most sqrt(1 − e^{−KL}) (Bretagnolle–Huber) and the
// KL divergence is at most the RDP value at any order α ≥ 1. The result is
// the minimum over the orders, never below 0.
//
// orders must all be > 1, rdp values ≥ 0 (+Inf allowed: that order is
// useless), the slices of equal length, and 0 < delta < 1.
func EpsilonFromRDP(orders, rdp []float64, delta float64) (eps, order float64, err error) {
	if err := checkCurve(orders, rdp); err != nil {
		return 0, 0, err
	}
	if !(delta > 0 && delta < 1) {
		return 0, 0, invalidf("delta must be in (0,1), got %v", delta)
	}
	eps, order = math.Inf(1), 0
	for i, a := range orders {
		r := rdp[i]
		var e float64
		switch {
		case math.IsInf(r, 1):
			continue
		case delta*delta+math.Expm1(-r) >= 0:
			e = 0 // δ ≥ sqrt(1−exp(−r)) ≥ TV distance
		case a > minBalleOrder:
			e = r + math.Log1p(-1/a) - (math.Log(delta)+math.Log(a))/(a-1)
		default:
			continue
		}
		if e < eps {
			eps, order = e, a
		}
	}
	if order == 0 {
		return math.Inf(1), 0, nil
	}
	return math.Max(eps, 0), order, nil
}

// DeltaFromRDP is the inverse of [EpsilonFromRDP]: the smallest δ such that
// the mechanism with this RDP curve is (epsilon, δ)-DP, and the order that
// attains it. Per order,
//
//	log δ(α) = (α−1)(r − ε + log1p(−1/α)) − log α
//
// (Balle et al. 2020), together with δ ≤ sqrt(1 − e^{−r}) (see
// EpsilonFromRDP). The result is at most 1.
func DeltaFromRDP(orders, rdp []float64, epsilon float64) (delta, order float64, err error) {
	if err := checkCurve(orders, rdp); err != nil {
		return 0, 0, err
	}
	if !(epsilon >= 0) || math.IsInf(epsilon, 0) {
		return 0, 0, invalidf("epsilon must be finite and >= 0, got %v", epsilon)
	}
	best, order := math.Inf(1), 0.0 // best is log δ
	for i, a := range orders {
		r := rdp[i]
		if math.IsInf(r, 1) {
			continue
		}
		ld := 0.5 * math.Log(-math.Expm1(-r))
		if a > minBalleOrder {
			ld = math.Min(ld, (a-1)*(r-epsilon+math.Log1p(-1/a))-math.Log(a))
		}
		if ld < best {
			best, order = ld, a
		}
	}
	if order == 0 {
		return 1, 0, nil
	}
	return math.Min(math.Exp(best), 1), order, nil
}

func checkCurve(orders, rdp []float64) error {
	if len(orders) != len(rdp) {
		return fmt.Errorf("rdp curve: %d orders but %d values", len(orders), len(rdp))
	}
	if len(orders) == 0 {
		return fmt.Errorf("rdp curve: no orders")
	}
	for i, a := range orders {
		if !(a > 1) || math.IsInf(a, 0) {
			return invalidf("rdp order must be finite and > 1, got %v", a)
		}
		if !(rdp[i] >= 0) {
			return invalidf("rdp value at order %v must be >= 0, got %v", a, rdp[i])
		}
	}
	return nil
}
