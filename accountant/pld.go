package accountant

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// DefaultPLDInterval is the loss grid's default interval (dp_accounting's
// default value_discretization_interval).
const DefaultPLDInterval = 1e-4

// PLDAccountant composes Gaussian and Poisson-subsampled Gaussian events
// through their privacy loss distributions (Meiser & Mohammadi 2018; Koskela
// et al. 2020; Doroshenko et al. 2022): each step's PLD is discretised
// pessimistically on a uniform loss grid (connect-the-dots), compositions
// are FFT convolutions (self-composition by repeated squaring), and tails
// are truncated by moving their mass to larger losses. Both directions of
// the add/remove relation are composed; ε(δ) is the worse of the two. The
// result is an upper bound on the mechanism's true ε(δ), tighter than RDP's
// conversion.
//
// The account is the list of composed events (what ran is data); the
// composed distributions are a cache, rebuilt when needed.
type PLDAccountant struct {
	interval float64
	segs     []pldSegment
	// cache: the composed PLDs of segs[:nSeg] with the last one's first
	// cnt steps (both directions).
	cache    [2]*pmf
	cacheSeg int
	cacheCnt int
	single   map[pldMech][2]*pmf // one step's PLD per mechanism
	// memo: the last Epsilon answer, for the account it was computed on
	// (a tracker asks several times per step).
	memo struct {
		segs  int
		count int
		delta float64
		b     Bound
	}
}

// pldMech is one step: a Gaussian of multiplier Sigma on a Poisson sample of
// rate Q (Q = 1: no sampling).
type pldMech struct {
	Q     float64 `json:"q"`
	Sigma float64 `json:"sigma"`
}

type pldSegment struct {
	pldMech
	Count int `json:"count"`
}

// PLDOption configures a PLD accountant.
type PLDOption func(*PLDAccountant) error

// WithPLDInterval sets the loss grid's interval (default 1e-4). A finer grid
// never gives a larger ε; it costs time and memory in proportion.
func WithPLDInterval(h float64) PLDOption {
	return func(a *PLDAccountant) error {
		if !(h > 0) || h > 1 || math.IsInf(h, 0) {
			return invalidf("pld: interval must be in (0, 1], got %v", h)
		}
		a.interval = h
		return nil
	}
}

// NewPLD returns an empty PLD accountant (add/remove relation).
func NewPLD(opts ...PLDOption) (*PLDAccountant, error) {
	a := &PLDAccountant{interval: DefaultPLDInterval}
	for _, o := range opts {
		if err := o(a); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Name is "pld".
func (*PLDAccountant) Name() string { return "pld" }

// Supports accepts Gaussian, PoissonSampled(Gaussian), NoOp and their
// SelfComposed / Composed forms. Other mechanisms (twice sampling, the
// hidden state, SRDP's preprocessing, sampling without replacement) have no
// PLD here: the tracker keeps using their own accountants.
func (a *PLDAccountant) Supports(ev Event) error {
	_, err := a.flatten(ev, 1, nil)
	return err
}

func (a *PLDAccountant) flatten(ev Event, count int, out []pldSegment) ([]pldSegment, error) {
	if ev == nil {
		return nil, invalidf("pld: nil event")
	}
	if err := ev.Validate(); err != nil {
		return nil, err
	}
	switch e := ev.(type) {
	case NoOp:
		return out, nil
	case Gaussian:
		return append(out, pldSegment{pldMech{Q: 1, Sigma: e.Sigma}, count}), nil
	case PoissonSampled:
		g, ok := e.Event.(Gaussian)
		if !ok {
			return nil, Unsupported(a.Name(), ev)
		}
		if e.Q == 0 {
			return out, nil
		}
		return append(out, pldSegment{pldMech{Q: e.Q, Sigma: g.Sigma}, count}), nil
	case SelfComposed:
		return a.flatten(e.Event, count*e.Count, out)
	case Composed:
		for _, in := range e.Events {
			var err error
			if out, err = a.flatten(in, count, out); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, Unsupported(a.Name(), ev)
}

// Compose adds count runs of ev.
func (a *PLDAccountant) Compose(ev Event, count int) error {
	if count < 0 {
		return invalidf("pld: negative count %d", count)
	}
	segs, err := a.flatten(ev, 1, nil)
	if err != nil {
		return err
	}
	if count == 0 || len(segs) == 0 {
		return nil
	}
	for r := 0; r < count; r++ {
		if r > 0 && len(segs) == 1 {
			// One mechanism repeated: one segment of count runs.
			a.add(pldSegment{segs[0].pldMech, segs[0].Count * (count - 1)})
			break
		}
		for _, s := range segs {
			a.add(s)
		}
	}
	return nil
}

func (a *PLDAccountant) add(s pldSegment) {
	if n := len(a.segs); n > 0 && a.segs[n-1].pldMech == s.pldMech {
		a.segs[n-1].Count += s.Count
		return
	}
	a.segs = append(a.segs, s)
}

// one is a single step's PLD of m in both directions (cached).
func (a *PLDAccountant) one(m pldMech) ([2]*pmf, error) {
	if p, ok := a.single[m]; ok {
		return p, nil
	}
	var out [2]*pmf
	for i, remove := range []bool{true, false} {
		p, err := connectTheDots(gaussianDirection{q: m.Q, sigma: m.Sigma, remove: remove}, a.interval)
		if err != nil {
			return out, err
		}
		out[i] = p
	}
	if a.single == nil {
		a.single = map[pldMech][2]*pmf{}
	}
	a.single[m] = out
	return out, nil
}

// composed returns the composed PLDs of the account (nil when empty),
// recomputed from the segments whenever the account changed.
func (a *PLDAccountant) composed() ([2]*pmf, error) {
	var none [2]*pmf
	if len(a.segs) == 0 {
		return none, nil
	}
	last := len(a.segs) - 1
	// The cache is used only for exactly this account, and otherwise
	// rebuilt from the segments: extending it by the steps added since
	// would make the last bits of ε depend on when bounds were asked for,
	// and a resumed run must equal an uninterrupted one exactly.
	if a.cache[0] != nil && a.cacheSeg == last && a.cacheCnt == a.segs[last].Count {
		return a.cache, nil
	}
	a.cache, a.cacheSeg, a.cacheCnt = none, 0, 0
	for a.cacheSeg <= last {
		s := a.segs[a.cacheSeg]
		if k := s.Count - a.cacheCnt; k > 0 {
			one, err := a.one(s.pldMech)
			if err != nil {
				return none, err
			}
			for i := range a.cache {
				step, err := one[i].power(k)
				if err != nil {
					return none, err
				}
				if a.cache[i] == nil {
					a.cache[i] = step
				} else if a.cache[i], err = convolve(a.cache[i], step); err != nil {
					return none, err
				}
			}
			a.cacheCnt = s.Count
		}
		if a.cacheSeg == last {
			break
		}
		a.cacheSeg, a.cacheCnt = a.cacheSeg+1, 0
	}
	return a.cache, nil
}

// Epsilon returns the smallest ε with δ(ε) ≤ delta in both directions.
func (a *PLDAccountant) Epsilon(delta float64) (Bound, error) {
	if !(delta > 0 && delta < 1) {
		return Bound{}, invalidf("pld: delta must be in (0,1), got %v", delta)
	}
	segs, count := len(a.segs), 0
	if segs > 0 {
		count = a.segs[segs-1].Count
	}
	if m := a.memo; m.b.Accountant != "" && m.segs == segs && m.count == count && m.delta == delta {
		return m.b, nil
	}
	c, err := a.composed()
	if err != nil {
		return Bound{}, err
	}
	b := Bound{Accountant: a.Name(), Delta: delta, Relation: AddRemove}
	for _, p := range c {
		if p != nil {
			b.Epsilon = math.Max(b.Epsilon, p.epsilonAt(delta))
		}
	}
	if math.IsInf(b.Epsilon, 1) {
		return b, fmt.Errorf("pld: δ = %g is below the mass at +∞ (no finite ε)", delta)
	}
	a.memo.segs, a.memo.count, a.memo.delta, a.memo.b = segs, count, delta, b
	return b, nil
}

// Delta returns the smallest δ the account proves at epsilon (the worse
// direction).
func (a *PLDAccountant) Delta(epsilon float64) (float64, error) {
	if !(epsilon >= 0) || math.IsInf(epsilon, 0) {
		return 0, invalidf("pld: epsilon must be finite and >= 0, got %v", epsilon)
	}
	c, err := a.composed()
	if err != nil {
		return 0, err
	}
	d := 0.0
	for _, p := range c {
		if p != nil {
			d = math.Max(d, p.deltaAt(epsilon))
		}
	}
	return d, nil
}

type pldState struct {
	Interval float64      `json:"interval"`
	Segments []pldSegment `json:"segments"`
}

// MarshalJSON writes the composed events and the grid interval.
func (a *PLDAccountant) MarshalJSON() ([]byte, error) {
	return json.Marshal(pldState{Interval: a.interval, Segments: a.segs})
}

// UnmarshalJSON restores an account written by MarshalJSON.
func (a *PLDAccountant) UnmarshalJSON(b []byte) error {
	var st pldState
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("pld state: %w", err)
	}
	if !(st.Interval > 0 && st.Interval <= 1) {
		return errors.New("pld state: interval must be in (0, 1]")
	}
	for _, s := range st.Segments {
		if err := (PoissonSampled{Q: s.Q, Event: Gaussian{Sigma: s.Sigma}}).Validate(); err != nil || s.Count < 1 || s.Q == 0 {
			return fmt.Errorf("pld state: bad segment %+v", s)
		}
	}
	*a = PLDAccountant{interval: st.Interval, segs: st.Segments}
	return nil
}

// PLDPoissonEpsilon is ε(δ) of steps Poisson-subsampled Gaussian steps by
// the PLD accountant.
func PLDPoissonEpsilon(q, sigma float64, steps int, delta float64, opts ...PLDOption) (Bound, error) {
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

// CalibrationPLDInterval is the loss grid of calibration searches.
const CalibrationPLDInterval = 5e-4

// calibratePLDGrids is Calibrate with WithPLDCertification: fine(σ) is the
// PLD ε on the default grid, coarse(σ) on CalibrationPLDInterval, rdp(σ)
// the RDP ε.
func calibratePLDGrids(fine, coarse, rdp func(sigma float64) (float64, error), target, tol float64) (float64, error) {
	hi, err := calibratePLD(coarse, rdp, target, tol/2)
	if err != nil {
		return 0, err
	}
	fine = nanChecked(fine)
	eHi, err := fine(hi)
	if err != nil {
		return 0, err
	}
	if eHi > target {
		// The coarse grid's ε is not always the larger: where the
		// privacy loss is huge (σ ≪ 1) the grids truncate its range
		// differently, and the coarse one can certify what the fine one
		// does not (seen at δ ≥ q, where the true ε is 0). Search on the
		// fine grid alone then.
		return calibratePLD(fine, rdp, target, tol)
	}
	lo := hi * (1 - 0.02)
	for target-eHi > tol && hi-lo > 1e-9*hi {
		mid := lo + (hi-lo)/2
		if e, err := fine(mid); err == nil && e <= target {
			hi, eHi = mid, e
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// calibratePLD calibrates σ for a PLD account pld(σ), bracketed by an RDP
// account rdp(σ) of the same mechanism: RDP is never tighter, so the
// RDP-calibrated σ meets the target under PLD too, and the search only goes
// down from there. Small σ, where the PLD grid grows large, are probed only
// as far as needed; a σ the PLD cannot evaluate counts as not meeting the
// target (the result is always a σ that was certified).
func calibratePLD(pld, rdp func(sigma float64) (float64, error), target, tol float64) (float64, error) {
	hi, err := calibrateSigma(rdp, target, tol)
	if err != nil {
		return 0, err
	}
	pld = nanChecked(pld)
	eHi, err := pld(hi)
	if err != nil {
		return 0, fmt.Errorf("calibrate sigma by pld at %v: %w", hi, err)
	}
	if eHi > target { // cannot happen for a correct pair; keep the RDP σ
		return hi, nil
	}
	lo := hi
	for {
		lo *= 0.8
		e, err := pld(lo)
		if err != nil || e > target {
			break
		}
		hi, eHi = lo, e
		if lo < 1e-3 {
			return hi, nil
		}
	}
	for target-eHi > tol && hi-lo > 1e-9*hi {
		mid := lo + (hi-lo)/2
		e, err := pld(mid)
		if err == nil && e <= target {
			hi, eHi = mid, e
		} else {
			lo = mid
		}
	}
	return hi, nil
}
