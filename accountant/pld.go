package accountant

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// DefaultPLDInterval is the default loss grid interval of the PLD accountant
// (dp_accounting's default value_discretization_interval).
const DefaultPLDInterval = 1e-4

// DefaultPLDTail is the tail mass each truncation may move (to +∞ or up).
const DefaultPLDTail = 1e-15

// PLD is a privacy-loss-distribution accountant for add/remove-one: it
// discretises each step's privacy loss pessimistically (connect-the-dots) on
// a uniform grid, composes by FFT, and reads ε(δ) off the composed
// distribution. Both dominating pairs (remove and add) are kept and the worse
// is reported. Its ε is an upper bound on the true ε of the mechanism and is
// the tightest of this package's accountants for the Poisson-subsampled
// Gaussian.
//
// It supports Gaussian (plain, σ relative to the add/remove sensitivity),
// PoissonSampled{Gaussian-like} with the inner event any Gaussian,
// SelfComposed or Composed nesting of Gaussians (as RDP), SelfComposed,
// Composed and NoOp. Replace-one sampling, twice sampling, the hidden-state
// and SRDP events are refused with ErrUnsupported.
//
// Compose only records the step (O(1)); the distribution is composed when a
// bound is asked for, and cached until the next Compose.
type PLD struct {
	name     string
	interval float64
	tail     float64
	runs     []pldRun // composition so far, run-length encoded

	cacheRuns int // len(runs) and total count the cache was built for
	cacheN    int64
	cache     [2]*plmf
}

// pldRun is count compositions of the Poisson-subsampled Gaussian (q = 1:
// the plain Gaussian).
type pldRun struct {
	Q     float64 `json:"q"`
	Sigma float64 `json:"sigma"`
	Count int64   `json:"count"`
}

// PLDOption configures NewPLD.
type PLDOption func(*PLD) error

// WithPLDInterval sets the loss grid interval (default 1e-4). A finer grid
// never gives a larger ε, and costs proportionally more.
func WithPLDInterval(h float64) PLDOption {
	return func(a *PLD) error {
		if !(h > 0 && h <= 1) {
			return invalidf("pld: grid interval must be in (0,1], got %v", h)
		}
		a.interval = h
		return nil
	}
}

// WithPLDTail sets the tail mass truncated at each step (default 1e-15).
func WithPLDTail(t float64) PLDOption {
	return func(a *PLD) error {
		if !(t > 0 && t < 1e-6) {
			return invalidf("pld: tail mass must be in (0,1e-6), got %v", t)
		}
		a.tail = t
		return nil
	}
}

// WithPLDName sets the accountant's name (default "pld").
func WithPLDName(name string) PLDOption {
	return func(a *PLD) error {
		if name == "" {
			return invalidf("pld: empty name")
		}
		a.name = name
		return nil
	}
}

// NewPLD returns an empty PLD account.
func NewPLD(opts ...PLDOption) (*PLD, error) {
	a := &PLD{name: "pld", interval: DefaultPLDInterval, tail: DefaultPLDTail}
	for _, o := range opts {
		if err := o(a); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Name returns the accountant's name.
func (a *PLD) Name() string { return a.name }

// Interval returns the loss grid interval.
func (a *PLD) Interval() float64 { return a.interval }

// Supports reports whether Compose would accept ev.
func (a *PLD) Supports(ev Event) error {
	_, err := a.eventRuns(nil, ev, 1)
	return err
}

// eventRuns appends ev's runs (times mult) to dst.
func (a *PLD) eventRuns(dst []pldRun, ev Event, mult int64) ([]pldRun, error) {
	if ev == nil {
		return nil, Unsupported(a.name, ev)
	}
	if err := ev.Validate(); err != nil {
		return nil, fmt.Errorf("%s accountant: %w", a.name, err)
	}
	switch e := ev.(type) {
	case NoOp:
		return dst, nil
	case Gaussian:
		return append(dst, pldRun{Q: 1, Sigma: e.Sigma, Count: mult}), nil
	case PoissonSampled:
		s, err := gaussianSigma(e.Event)
		if err != nil {
			return nil, fmt.Errorf("%s accountant: %w", a.name, err)
		}
		if e.Q == 0 || math.IsInf(s, 1) {
			return dst, nil
		}
		return append(dst, pldRun{Q: e.Q, Sigma: s, Count: mult}), nil
	case SelfComposed:
		if e.Count == 0 {
			return dst, nil
		}
		return a.eventRuns(dst, e.Event, mult*int64(e.Count))
	case Composed:
		var err error
		for _, s := range e.Events {
			if dst, err = a.eventRuns(dst, s, mult); err != nil {
				return nil, err
			}
		}
		return dst, nil
	}
	return nil, fmt.Errorf("%w (the PLD accountant handles the Gaussian and Poisson-subsampled Gaussian under add/remove)", Unsupported(a.name, ev))
}

// Compose adds count runs of ev to the account; on error it is unchanged.
func (a *PLD) Compose(ev Event, count int) error {
	if count < 0 {
		return invalidf("pld: compose count must be >= 0, got %d", count)
	}
	add, err := a.eventRuns(nil, ev, int64(count))
	if err != nil {
		return err
	}
	for _, r := range add {
		if r.Count == 0 {
			continue
		}
		if n := len(a.runs); n > 0 && a.runs[n-1].Q == r.Q && a.runs[n-1].Sigma == r.Sigma {
			a.runs[n-1].Count += r.Count
			continue
		}
		a.runs = append(a.runs, r)
	}
	return nil
}

// Steps returns the number of elementary mechanisms composed.
func (a *PLD) Steps() int64 {
	var n int64
	for _, r := range a.runs {
		n += r.Count
	}
	return n
}

// distributions composes the account in both directions (cached).
func (a *PLD) distributions() ([2]*plmf, error) {
	n := a.Steps()
	if a.cache[0] != nil && a.cacheRuns == len(a.runs) && a.cacheN == n {
		return a.cache, nil
	}
	// Composition commutes: gather equal mechanisms, power each once.
	type key struct{ q, s float64 }
	counts := map[key]int64{}
	var order []key
	for _, r := range a.runs {
		k := key{r.Q, r.Sigma}
		if _, ok := counts[k]; !ok {
			order = append(order, k)
		}
		counts[k] += r.Count
	}
	var out [2]*plmf
	for d := range out {
		acc := identityPLMF(a.interval)
		for _, k := range order {
			one, err := sgmPLMF(pldDirection(d), k.q, k.s, a.interval, a.tail)
			if err != nil {
				return out, fmt.Errorf("%s accountant: %w", a.name, err)
			}
			c := counts[k]
			if c > math.MaxInt32 {
				return out, fmt.Errorf("%s accountant: %d compositions is too many", a.name, c)
			}
			pow, err := one.selfCompose(int(c), a.tail)
			if err != nil {
				return out, fmt.Errorf("%s accountant: %w", a.name, err)
			}
			acc = convolve(acc, pow, a.tail)
		}
		out[d] = acc
	}
	a.cache, a.cacheRuns, a.cacheN = out, len(a.runs), n
	return out, nil
}

// Epsilon returns the smallest ε at delta over both directions.
func (a *PLD) Epsilon(delta float64) (Bound, error) {
	if !(delta > 0 && delta < 1) {
		return Bound{}, invalidf("%s accountant: delta must be in (0,1), got %v", a.name, delta)
	}
	ds, err := a.distributions()
	if err != nil {
		return Bound{}, err
	}
	eps := math.Max(ds[0].epsilon(delta), ds[1].epsilon(delta))
	return Bound{Accountant: a.name, Epsilon: eps, Delta: delta, Relation: AddRemove}, nil
}

// Delta returns the smallest δ at epsilon over both directions.
func (a *PLD) Delta(epsilon float64) (float64, error) {
	if !(epsilon >= 0) || math.IsInf(epsilon, 0) {
		return 0, invalidf("%s accountant: epsilon must be finite and >= 0, got %v", a.name, epsilon)
	}
	ds, err := a.distributions()
	if err != nil {
		return 0, err
	}
	return math.Max(ds[0].delta(epsilon), ds[1].delta(epsilon)), nil
}

type pldState struct {
	Name     string   `json:"name"`
	Interval float64  `json:"interval"`
	Tail     float64  `json:"tail"`
	Runs     []pldRun `json:"runs"`
}

// MarshalJSON writes the account: its grid and the mechanisms composed
// (floats in round-trip form), from which the distribution is rebuilt.
func (a *PLD) MarshalJSON() ([]byte, error) {
	return json.Marshal(pldState{Name: a.name, Interval: a.interval, Tail: a.tail, Runs: slices.Clone(a.runs)})
}

// UnmarshalJSON restores an account written by MarshalJSON.
func (a *PLD) UnmarshalJSON(data []byte) error {
	var st pldState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("pld state: %w", err)
	}
	b, err := NewPLD(WithPLDName(st.Name), WithPLDInterval(st.Interval), WithPLDTail(st.Tail))
	if err != nil {
		return fmt.Errorf("pld state: %w", err)
	}
	for _, r := range st.Runs {
		if !(r.Q > 0 && r.Q <= 1) || !(r.Sigma > 0) || math.IsInf(r.Sigma, 0) || r.Count < 1 {
			return fmt.Errorf("pld state: invalid run q=%v sigma=%v count=%d", r.Q, r.Sigma, r.Count)
		}
	}
	b.runs = st.Runs
	*a = *b
	return nil
}

// PoissonPLDEpsilon is the PLD ε at delta of steps runs of the Gaussian of
// noise multiplier sigma on Poisson subsamples of rate q (add/remove-one).
func PoissonPLDEpsilon(q, sigma float64, steps int, delta float64, opts ...PLDOption) (Bound, error) {
	if err := checkPoissonArgs(q, steps, delta); err != nil {
		return Bound{}, err
	}
	a, err := NewPLD(opts...)
	if err != nil {
		return Bound{}, err
	}
	if err := a.Compose(PoissonSampled{Q: q, Event: Gaussian{Sigma: sigma}}, steps); err != nil {
		return Bound{}, err
	}
	return a.Epsilon(delta)
}

// PoissonPLDSigma is the noise multiplier for DP-SGD with Poisson rate q run
// for steps steps to meet (target, delta) under the PLD accountant.
func PoissonPLDSigma(target, delta, q float64, steps int, pld []PLDOption, opts ...CalibrateOption) (float64, error) {
	if err := checkPoissonArgs(q, steps, delta); err != nil {
		return 0, err
	}
	return CalibrateSigma(func(sigma float64) (float64, error) {
		b, err := PoissonPLDEpsilon(q, sigma, steps, delta, pld...)
		return b.Epsilon, err
	}, target, opts...)
}
