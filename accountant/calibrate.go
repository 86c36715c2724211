package accountant

import (
	"fmt"
	"math"
)

// DefaultTolerance is the default calibration tolerance in ε.
const DefaultTolerance = 1e-3

// ExactTolerance asks Calibrate for the crossing itself, to float64
// precision (relative 1e-12 in the parameter).
const ExactTolerance = math.SmallestNonzeroFloat64

// maxCalibratedSigma bounds the search for a noise multiplier.
const maxCalibratedSigma = 1e6

// SigmaResolution is the relative width in σ to which Calibrate brackets
// the smallest σ meeting the target, whatever the tolerance in ε: the
// returned σ is at most 0.1% above it (a tolerance in ε alone allows more
// where ε is flat in σ, as at small ε).
const SigmaResolution = 1e-3

// CalibrateOption configures Calibrate.
type CalibrateOption func(*calibration) error

type calibration struct {
	tol      float64
	rdp      []RDPOption
	maxSteps int                                  // > 0: search a number of steps
	coarse   func(sigma float64) (float64, error) // PLD certification: the coarse grid's ε
	upper    func(sigma float64) (float64, error) // PLD certification: the RDP ε
}

// WithTolerance sets the calibration tolerance in ε (default 1e-3): the
// returned σ has target − tol ≤ ε(σ) ≤ target, unless it is within
// SigmaResolution of a σ whose ε exceeds the target.
func WithTolerance(tol float64) CalibrateOption {
	return func(c *calibration) error {
		if !(tol > 0) || math.IsInf(tol, 0) {
			return invalidf("calibration tolerance must be positive and finite, got %v", tol)
		}
		c.tol = tol
		return nil
	}
}

// WithRDPOptions passes options (order grid, series) to the RDP account
// used by PoissonSteps.
func WithRDPOptions(opts ...RDPOption) CalibrateOption {
	return func(c *calibration) error {
		c.rdp = append(c.rdp, opts...)
		return nil
	}
}

// WithMaxSteps makes Calibrate search a number of steps T ≤ max, for which
// ε(T) is non-decreasing: it returns the largest T with ε(T) ≤ target (0
// when even one step exceeds it).
func WithMaxSteps(max int) CalibrateOption {
	return func(c *calibration) error {
		if max < 1 {
			return invalidf("maximum steps must be >= 1, got %d", max)
		}
		c.maxSteps = max
		return nil
	}
}

// WithPLDCertification makes Calibrate's ε a PLD account on its default
// grid, coarse(σ) the same account on CalibrationPLDInterval (as a rule
// not smaller) and rdp(σ) an RDP account of the same mechanism (never
// smaller). The search runs on the coarse grid from the RDP σ down, then
// walks down and bisects on the default grid to the smallest σ it
// certifies (within SigmaResolution); when the coarse grid's σ is not
// certified the search reruns on the default grid, and when no σ is, the
// result is the RDP σ, certified by RDP.
func WithPLDCertification(coarse, rdp func(sigma float64) (float64, error)) CalibrateOption {
	return func(c *calibration) error {
		if coarse == nil || rdp == nil {
			return invalidf("PLD certification needs the coarse-grid and RDP accounts")
		}
		c.coarse, c.upper = coarse, rdp
		return nil
	}
}

func newCalibration(opts []CalibrateOption) (*calibration, error) {
	c := &calibration{tol: DefaultTolerance}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Account is the ε at delta of a fresh accountant from newAcc after the
// prefix events and the event at parameter x composed as many times as
// event says: the function Calibrate inverts (as dp_accounting's
// calibrate_dp_mechanism takes make_fresh_accountant and
// make_event_from_param).
func Account(newAcc func() (Accountant, error), event func(x float64) (Event, int), delta float64, prefix ...Event) func(x float64) (float64, error) {
	return func(x float64) (float64, error) {
		acc, err := newAcc()
		if err != nil {
			return 0, err
		}
		for _, ev := range prefix {
			if err := acc.Compose(ev, 1); err != nil {
				return 0, err
			}
		}
		ev, count := event(x)
		if err := acc.Compose(ev, count); err != nil {
			return 0, err
		}
		b, err := acc.Epsilon(delta)
		if err != nil {
			return 0, err
		}
		return b.Epsilon, nil
	}
}

// Calibrate is the one calibrator: it finds the parameter x at which eps(x)
// (usually built with Account) meets target. By default x is a noise
// multiplier and eps non-increasing in it: the search bisects and returns
// the conservative end of the final bracket, an x with ε(x) ≤ target,
// within the tolerance (WithTolerance) of target in ε, or as close as
// float64 allows. WithMaxSteps searches a number of steps instead and
// WithPLDCertification certifies a PLD calibration on its fine grid.
func Calibrate(eps func(x float64) (float64, error), target float64, opts ...CalibrateOption) (float64, error) {
	c, err := newCalibration(opts)
	if err != nil {
		return 0, err
	}
	if !(target > 0) || math.IsInf(target, 0) {
		return 0, invalidf("target epsilon must be positive and finite, got %v", target)
	}
	switch {
	case c.maxSteps > 0:
		k, err := calibrateSteps(func(k int) (float64, error) { return eps(float64(k)) }, target, c.maxSteps)
		return float64(k), err
	case c.coarse != nil:
		return calibratePLDGrids(eps, c.coarse, c.upper, target, c.tol)
	}
	return calibrateSigma(eps, target, c.tol)
}

// calibrateSigma bisects a non-increasing eps(σ) for target.
func calibrateSigma(eps func(sigma float64) (float64, error), target, tol float64) (float64, error) {
	eps = nanChecked(eps)
	// Bracket: ε(lo) > target ≥ ε(hi).
	hi := 1.0
	eHi, err := eps(hi)
	if err != nil {
		return 0, fmt.Errorf("calibrate sigma at %v: %w", hi, err)
	}
	for eHi > target {
		hi *= 2
		if hi > maxCalibratedSigma {
			return 0, fmt.Errorf("calibrate sigma: epsilon %v not reached with sigma up to %v", target, maxCalibratedSigma)
		}
		if eHi, err = eps(hi); err != nil {
			return 0, fmt.Errorf("calibrate sigma at %v: %w", hi, err)
		}
	}
	lo := hi / 2
	for {
		e, err := eps(lo)
		if err != nil {
			return 0, fmt.Errorf("calibrate sigma at %v: %w", lo, err)
		}
		if e > target {
			break
		}
		hi, eHi = lo, e
		lo /= 2
		if lo < 1e-6 {
			return hi, nil // any noise at all meets the target
		}
	}
	for unresolved(target, eHi, tol, lo, hi) {
		mid := lo + (hi-lo)/2
		e, err := eps(mid)
		if err != nil {
			return 0, fmt.Errorf("calibrate sigma at %v: %w", mid, err)
		}
		if e <= target {
			hi, eHi = mid, e
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// unresolved says whether a bisection bracket lo < hi, ε(hi) = eHi ≤
// target, must narrow on: until ε(hi) is within tol of target and the
// bracket within SigmaResolution, or the bracket at float resolution.
func unresolved(target, eHi, tol, lo, hi float64) bool {
	return (target-eHi > tol || hi-lo > SigmaResolution*hi) && hi-lo > 1e-12*hi
}

// nanChecked turns a NaN ε into an error: NaN compares false both ways and
// would end a bisection at a wrong σ.
func nanChecked(eps func(float64) (float64, error)) func(float64) (float64, error) {
	return func(x float64) (float64, error) {
		e, err := eps(x)
		if err == nil && math.IsNaN(e) {
			err = fmt.Errorf("epsilon is NaN")
		}
		return e, err
	}
}

// calibrateSteps returns the largest number of steps T ≤ maxSteps with
// eps(T) ≤ target, for a non-decreasing eps(T); 0 when even one step
// exceeds the target.
func calibrateSteps(eps func(steps int) (float64, error), target float64, maxSteps int) (int, error) {
	ok := func(t int) (bool, error) {
		e, err := eps(t)
		if err == nil && math.IsNaN(e) {
			err = fmt.Errorf("epsilon is NaN")
		}
		if err != nil {
			return false, fmt.Errorf("calibrate steps at %d: %w", t, err)
		}
		return e <= target, nil
	}
	// Invariant: good meets the target (0 trivially), bad does not.
	good, bad := 0, 0
	for t := 1; ; t *= 2 {
		if t >= maxSteps {
			t = maxSteps
		}
		within, err := ok(t)
		if err != nil {
			return 0, err
		}
		if !within {
			bad = t
			break
		}
		good = t
		if t == maxSteps {
			return maxSteps, nil
		}
	}
	for bad-good > 1 {
		mid := good + (bad-good)/2
		within, err := ok(mid)
		if err != nil {
			return 0, err
		}
		if within {
			good = mid
		} else {
			bad = mid
		}
	}
	return good, nil
}

// PoissonEpsilon is the RDP ε at delta of steps runs of the Gaussian of
// noise multiplier sigma on Poisson subsamples of rate q (add/remove-one),
// with the order that attains it.
func PoissonEpsilon(q, sigma float64, steps int, delta float64, opts ...RDPOption) (Bound, error) {
	a, err := NewRDP(opts...)
	if err != nil {
		return Bound{}, err
	}
	if err := a.Compose(PoissonSampled{Q: q, Event: Gaussian{Sigma: sigma}}, steps); err != nil {
		return Bound{}, err
	}
	return a.Epsilon(delta)
}

// PoissonSteps is the largest number of steps (at most maxSteps) of DP-SGD
// with Poisson rate q and noise multiplier sigma that meets (target, delta).
func PoissonSteps(target, delta, q, sigma float64, maxSteps int, opts ...CalibrateOption) (int, error) {
	c, err := newCalibration(opts)
	if err != nil {
		return 0, err
	}
	if err := checkPoissonArgs(q, 1, delta); err != nil {
		return 0, err
	}
	a, err := NewRDP(c.rdp...)
	if err != nil {
		return 0, err
	}
	one, _, err := a.eventRDP(PoissonSampled{Q: q, Event: Gaussian{Sigma: sigma}})
	if err != nil {
		return 0, err
	}
	curve := make([]float64, len(one))
	return calibrateSteps(func(t int) (float64, error) {
		for i, v := range one {
			curve[i] = float64(t) * v
		}
		e, _, err := EpsilonFromRDP(a.orders, curve, delta)
		return e, err
	}, target, maxSteps)
}

func checkPoissonArgs(q float64, steps int, delta float64) error {
	if !(q > 0 && q <= 1) {
		return invalidf("sampling probability q must be in (0,1], got %v", q)
	}
	if steps < 1 {
		return invalidf("steps must be >= 1, got %d", steps)
	}
	if !(delta > 0 && delta < 1) {
		return invalidf("delta must be in (0,1), got %v", delta)
	}
	return nil
}
