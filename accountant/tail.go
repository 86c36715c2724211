package accountant

import (
	"fmt"
	"math"
)

// FailureProbability is an event of probability at most Delta on which an
// analysis gives no guarantee: the mechanism it accompanies is described
// by the other events only outside it, so it adds Delta to the δ of any
// (ε, δ) bound (conditional composition, docs/accountants.md#failure-probability).
// It releases nothing itself. The PLD accountant sums these and answers at
// δ minus the sum; the RDP accountant refuses it (its δ conversion is not
// where a tail belongs, and the events it accompanies here have no RDP).
type FailureProbability struct {
	Delta float64
}

func (FailureProbability) eventKind() string { return "failure_probability" }

// Validate checks 0 ≤ Delta < 1.
func (e FailureProbability) Validate() error {
	if !(e.Delta >= 0 && e.Delta < 1) {
		return invalidf("failure probability must be in [0,1), got %v", e.Delta)
	}
	return nil
}

// addUp is a + b rounded up: a sum of failure probabilities is a bound, so
// it may only err upward.
func addUp(a, b float64) float64 {
	s := a + b
	if s-a < b || s-b < a { // rounded down
		s = math.Nextafter(s, math.Inf(1))
	}
	return s
}

// tailRemainder is the δ left to the PLD after the failure probabilities:
// delta − tail, rounded down, or an error when nothing is left.
func tailRemainder(delta, tail float64) (float64, error) {
	if tail == 0 {
		return delta, nil
	}
	r := delta - tail
	if r+tail > delta {
		r = math.Nextafter(r, 0)
	}
	if !(r > 0) {
		return 0, fmt.Errorf("pld: %w: δ = %g is not above the account's failure probability %g", ErrPLDUncertified, delta, tail)
	}
	return r, nil
}

// tailOf is the failure probability ev carries: its FailureProbability
// events, summed (rounded up) over Composed and SelfComposed.
func tailOf(ev Event) float64 {
	switch e := ev.(type) {
	case FailureProbability:
		return e.Delta
	case SelfComposed:
		if t := tailOf(e.Event); t > 0 {
			return t * float64(e.Count) * (1 + 1e-15)
		}
	case Composed:
		s := 0.0
		for _, in := range e.Events {
			s = addUp(s, tailOf(in))
		}
		return s
	}
	return 0
}
