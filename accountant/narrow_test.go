package accountant

import (
	"errors"
	"math"
	"testing"
)

// narrowSigma ends where bisection would (a certified σ with ε within the
// tolerance and the bracket within the resolution), in fewer probes, and
// never more than twice bisection's, on smooth and awkward ε(σ) alike.
func TestNarrowSigma(t *testing.T) {
	errUncertified := errors.New("uncertified")
	tests := []struct {
		name   string
		eps    func(s float64) (float64, error)
		target float64
		tol    float64
		lo, hi float64
	}{
		{"power law", func(s float64) (float64, error) { return 2 / (s * s), nil }, 3, 1e-3, 0.5, 1.2},
		{"gaussian-like", func(s float64) (float64, error) { return 1/s + math.Sqrt(2*math.Log(1.25e5))/s, nil }, 1, 1e-3, 3, 8},
		{"flat", func(s float64) (float64, error) { return 0.5 + 0.01/s, nil }, 0.52, 1e-3, 0.1, 10},
		{"steep", func(s float64) (float64, error) { return math.Exp(10 / s), nil }, 8, 1e-3, 3, 6},
		{"uncertified below", func(s float64) (float64, error) {
			if s < 0.9 {
				return 0, errUncertified
			}
			return 2 / (s * s), nil
		}, 2.4, 1e-3, 0.5, 1.2},
		{"exact tolerance", func(s float64) (float64, error) { return 2 / (s * s), nil }, 3, ExactTolerance, 0.5, 1.2},
	}
	for _, tc := range tests {
		probes := 0
		counted := func(s float64) (float64, error) { probes++; return tc.eps(s) }
		eLo, err := tc.eps(tc.lo)
		if err != nil {
			eLo = math.Inf(1)
		}
		eHi, _ := tc.eps(tc.hi)
		got := narrowSigma(counted, tc.target, tc.tol, tc.lo, eLo, tc.hi, eHi)
		// Bisection's probes for the same bracket.
		bis := 0
		lo, hi, e := tc.lo, tc.hi, eHi
		for unresolved(tc.target, e, tc.tol, lo, hi) {
			bis++
			mid := lo + (hi-lo)/2
			if v, err := tc.eps(mid); err == nil && v <= tc.target {
				hi, e = mid, v
			} else {
				lo = mid
			}
		}
		eGot, err := tc.eps(got)
		if err != nil || eGot > tc.target {
			t.Errorf("%s: σ = %v has ε = %v (%v), above the target %v", tc.name, got, eGot, err, tc.target)
		}
		// The smallest σ meeting the target is within the resolution below.
		if v, err := tc.eps(got * (1 - 1.01*SigmaResolution)); err == nil && v <= tc.target && tc.target-eGot > tc.tol {
			t.Errorf("%s: σ = %v is not within the resolution or tolerance of the crossing", tc.name, got)
		}
		if math.Abs(got-hi) > 2*SigmaResolution*hi {
			t.Errorf("%s: σ = %v, bisection %v", tc.name, got, hi)
		}
		if probes > 2*bis+2 {
			t.Errorf("%s: %d probes, bisection %d", tc.name, probes, bis)
		}
		t.Logf("%s: %d probes (bisection %d), σ = %.6g", tc.name, probes, bis, got)
	}
}
