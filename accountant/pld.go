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
// pessimistically on a uniform loss grid (connect-the-dots), and the
// composition at a query is formed by FFT after an exponential tilt aimed
// at the answer, with every float error bounded and added to the masses
// (docs/accountants.md#pld). Both directions of the add/remove relation are
// composed; ε(δ) is the worse of the two. The result is a certified upper
// bound on the mechanism's true ε(δ); a query it cannot certify is an error
// wrapping ErrPLDUncertified.
//
// The account is the list of composed events (what ran is data); the grid
// and every composition are functions of the account alone, so a resumed
// account gives the same ε bit for bit.
type PLDAccountant struct {
	interval float64
	segs     []pldSegment
	// tail is the sum of the FailureProbability events composed (rounded
	// up): every answer is at δ − tail.
	tail float64
	// grid is read from and written to saved accounts of the untilted
	// PLD (before issue 38), which ran on a coarser grid when needed; the
	// certified composition chooses its grid from the account alone.
	grid   float64
	single map[pldKey]*pldStep // one step's PLD per mechanism and grid
	// memo: the last Epsilon answer, for the account it was computed on
	// (a tracker asks several times per step).
	memo struct {
		segs  int
		count int
		delta float64
		tail  float64
		b     Bound
	}
}

// pldMech is one step: a Gaussian of multiplier Sigma on a Poisson sample of
// rate Q (Q = 1: no sampling), or, when Mix is set, the mixture of
// Gaussians it names (mog.go) at standard deviation Sigma.
type pldMech struct {
	Q     float64 `json:"q"`
	Sigma float64 `json:"sigma"`
	Mix   string  `json:"mix,omitempty"`
}

type pldSegment struct {
	pldMech
	Count int `json:"count"`
}

type pldKey struct {
	m pldMech
	h float64
}

// pldStep is one step's PLD in both directions (remove, add) on one grid,
// with their log-MGFs once needed.
type pldStep struct {
	p [2]*pmf
	g [2]logMGF
}

// PLDOption configures a PLD accountant.
type PLDOption func(*PLDAccountant) error

// WithPLDInterval sets the loss grid's starting interval (default 1e-4): the
// grid used is finer for steps of tiny losses and coarser for compositions
// that do not fit (docs/accountants.md#pld).
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

// Supports accepts Gaussian, PoissonSampled(Gaussian), MixtureOfGaussians, NoOp and their
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
	case FailureProbability:
		return out, nil // summed by Compose (tailOf)
	case MixtureOfGaussians:
		if m, ok := mogMech(e); ok {
			return append(out, pldSegment{m, count}), nil
		}
		return out, nil
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
	if count == 0 {
		return nil
	}
	if t := tailOf(ev); t > 0 {
		// count·t with its rounding covered (relative error ≤ 2⁻⁵³).
		tail := addUp(a.tail, t*float64(count)*(1+1e-15))
		if !(tail < 1) {
			return invalidf("pld: failure probabilities sum to %v, not below 1", tail)
		}
		a.tail = tail
	}
	if len(segs) == 0 {
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

// step is a single step's PLD of m in both directions on grid h, from
// the accountant's own map or the process-wide cache (stepCache).
func (a *PLDAccountant) step(m pldMech, h float64) (*pldStep, error) {
	k := pldKey{m, h}
	if st, ok := a.single[k]; ok {
		return st, nil
	}
	p, err := pldStepCache.get(k)
	if err != nil {
		return nil, err
	}
	st := &pldStep{p: p}
	if a.single == nil {
		a.single = map[pldKey]*pldStep{}
	}
	a.single[k] = st
	return st, nil
}

// Epsilon returns the smallest ε with δ(ε) ≤ delta in both directions,
// certified: each direction's composition is formed by the tilted FFT with
// its rounding bounded (docs/accountants.md#pld). A query the bound cannot
// certify is an error saying so, never a smaller number.
func (a *PLDAccountant) Epsilon(delta float64) (Bound, error) {
	if !(delta > 0 && delta < 1) {
		return Bound{}, invalidf("pld: delta must be in (0,1), got %v", delta)
	}
	segs, count := len(a.segs), 0
	if segs > 0 {
		count = a.segs[segs-1].Count
	}
	if m := a.memo; m.b.Accountant != "" && m.segs == segs && m.count == count && m.delta == delta && m.tail == a.tail {
		return m.b, nil
	}
	b := Bound{Accountant: a.Name(), Delta: delta, Relation: AddRemove}
	pldDelta, err := tailRemainder(delta, a.tail)
	if err != nil {
		return Bound{}, err
	}
	if segs == 0 {
		return b, nil
	}
	delta = pldDelta
	h, err := a.tiltGrid()
	if err != nil {
		return Bound{}, err
	}
	for dir := range 2 {
		e, err := a.epsilonDirection(dir, h, delta)
		if err != nil {
			return Bound{}, err
		}
		b.Epsilon = math.Max(b.Epsilon, e)
	}
	if math.IsInf(b.Epsilon, 1) {
		return b, fmt.Errorf("pld: %w: δ = %g is below the mass at +∞ (no finite ε)", ErrPLDUncertified, delta)
	}
	a.memo.segs, a.memo.count, a.memo.delta, a.memo.tail, a.memo.b = segs, count, b.Delta, a.tail, b
	return b, nil
}

// epsilonDirection is one direction's certified ε(delta). The tilt is
// aimed at an estimate of ε (first a Chernoff bound, then each answer)
// until the answer stops moving; every answer is certified, and the
// smallest is returned.
func (a *PLDAccountant) epsilonDirection(dir int, h, delta float64) (float64, error) {
	terms, h, err := a.fitTerms(dir, h)
	if err != nil {
		return 0, err
	}
	e := math.Inf(1)
	var g logMGF
	for i, t := range terms {
		st, err := a.step(a.segs[i].pldMech, h)
		if err != nil {
			return 0, err
		}
		if st.g[dir].up == nil {
			st.g[dir] = t.p.mgf()
		}
		g = addScaledMGF(g, st.g[dir], float64(t.k))
	}
	for i, l := range chernoffLambdas {
		e = min(e, (g.up[i]-math.Log(delta))/l)
	}
	e = max(e, 0)
	best := math.Inf(1)
	for range 6 {
		c, err := a.certified(dir, h, e, 1e-10*delta)
		if err != nil {
			return 0, fmt.Errorf("pld: ε at δ = %g: %w", delta, err)
		}
		// A hair below delta: the sums in epsilonAt round.
		e2 := c.epsilonAt(delta * (1 - 1e-9))
		best = min(best, e2)
		if math.IsInf(e2, 1) || math.Abs(e2-e) <= 1e-4*max(e2, 1e-2) {
			break
		}
		e = e2
	}
	return best, nil
}

// terms is the account's steps on grid h in direction dir.
func (a *PLDAccountant) terms(dir int, h float64) ([]tiltTerm, error) {
	out := make([]tiltTerm, 0, len(a.segs))
	for _, s := range a.segs {
		st, err := a.step(s.pldMech, h)
		if err != nil {
			return nil, err
		}
		out = append(out, tiltTerm{st.p[dir], s.Count})
	}
	return out, nil
}

// fitTerms is terms on grid h, or on the first doubling of h its steps fit.
func (a *PLDAccountant) fitTerms(dir int, h float64) ([]tiltTerm, float64, error) {
	for range 1100 {
		terms, err := a.terms(dir, h)
		if !errors.Is(err, errPLDTooWide) {
			return terms, h, err
		}
		h *= 2
	}
	return nil, 0, fmt.Errorf("pld: no grid holds the account")
}

// certified is the certified composition of direction dir near loss
// target on grid h, or on a coarser one where its window does not fit.
func (a *PLDAccountant) certified(dir int, h, target, tauHi float64) (*pmf, error) {
	for range 64 {
		terms, err := a.terms(dir, h)
		if err == nil {
			var c *pmf
			c, err = certifiedComposition(terms, target, tauHi)
			if err == nil {
				return c, nil
			}
		}
		if !errors.Is(err, errPLDTooWide) {
			return nil, err
		}
		h *= 2
	}
	return nil, fmt.Errorf("pld: no grid holds the account")
}

// pldStdFraction is the largest grid interval, as a fraction of a step's
// privacy-loss standard deviation, the certified composition runs on:
// connect-the-dots adds up to h²/4 of variance per step, which over many
// steps of tiny losses (q = 1e-4) would otherwise widen the composition
// by several percent.
const pldStdFraction = 0.05

// tiltGrid is the grid the certified composition starts on: the interval,
// halved while some step's loss is narrower than 20 intervals (at most six
// times, and while every step fits a quarter of maxPLDPoints). It depends
// on the account alone, so a resumed account gives the same ε.
func (a *PLDAccountant) tiltGrid() (float64, error) {
	h := a.interval
	minStd := math.Inf(1)
	for _, s := range a.segs {
		for _, remove := range []bool{true, false} {
			g, err := s.curve(remove)
			if err != nil {
				return 0, err
			}
			span := gridSpan(g, h)
			if math.IsNaN(span) || math.IsInf(span, 0) {
				return 0, invalidf("pld: the privacy loss of %s is beyond floating point", g.describe())
			}
			if span > maxPLDPoints {
				return h, nil // already too wide: certified coarsens it
			}
		}
		st, err := a.step(s.pldMech, h)
		if err != nil {
			return 0, err
		}
		for _, p := range st.p {
			minStd = min(minStd, p.std())
		}
	}
	for range 6 {
		if h <= pldStdFraction*minStd {
			break
		}
		fits := true
		for _, s := range a.segs {
			for _, remove := range []bool{true, false} {
				if g, _ := s.curve(remove); gridSpan(g, h/2) > maxPLDPoints/4 {
					fits = false // (curve's error was seen above)
				}
			}
		}
		if !fits {
			break
		}
		h /= 2
	}
	a.pruneSteps(h)
	return h, nil
}

// pruneSteps forgets the steps' PLDs on grids other than the interval and h.
func (a *PLDAccountant) pruneSteps(h float64) {
	for k := range a.single {
		if k.h != h && k.h != a.interval {
			delete(a.single, k)
		}
	}
}

// Delta returns the smallest δ the account proves at epsilon (the worse
// direction), certified as Epsilon is.
func (a *PLDAccountant) Delta(epsilon float64) (float64, error) {
	if !(epsilon >= 0) || math.IsInf(epsilon, 0) {
		return 0, invalidf("pld: epsilon must be finite and >= 0, got %v", epsilon)
	}
	if len(a.segs) == 0 {
		return a.tail, nil
	}
	h, err := a.tiltGrid()
	if err != nil {
		return 0, err
	}
	d := 0.0
	for dir := range 2 {
		c, err := a.certified(dir, h, epsilon, 1e-30)
		if err != nil {
			return 0, fmt.Errorf("pld: δ at ε = %g: %w", epsilon, err)
		}
		d = math.Max(d, c.deltaAt(epsilon)*(1+1e-9))
	}
	return math.Min(1, addUp(d, a.tail)), nil
}

type pldState struct {
	Interval float64      `json:"interval"`
	Grid     float64      `json:"grid,omitempty"` // the coarser grid the account needed, if any
	Segments []pldSegment `json:"segments"`
	// Tail is the summed FailureProbability events, written exactly.
	Tail float64 `json:"tail,omitempty"`
}

// MarshalJSON writes the composed events and the grid interval.
func (a *PLDAccountant) MarshalJSON() ([]byte, error) {
	return json.Marshal(pldState{Interval: a.interval, Grid: a.grid, Segments: a.segs, Tail: a.tail})
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
		if _, err := s.curve(true); err != nil {
			return fmt.Errorf("pld state: bad segment %+v: %w", s, err)
		}
	}
	if st.Grid != 0 && !(st.Grid >= st.Interval && !math.IsInf(st.Grid, 0)) {
		return errors.New("pld state: grid must be at least the interval")
	}
	if !(st.Tail >= 0 && st.Tail < 1) {
		return errors.New("pld state: tail must be in [0, 1)")
	}
	*a = PLDAccountant{interval: st.Interval, segs: st.Segments, grid: st.Grid, tail: st.Tail}
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
	// The coarse grid's ε is as a rule the larger, so its σ is above the
	// fine grid's smallest (3% at ε = 0.5, δ = 1e-8, q = 0.001, T = 5e4):
	// walk down on the fine grid in growing steps to a σ it does not
	// certify, then bisect.
	lo, eLo := hi, math.Inf(1)
	for step := 0.005; ; step = min(2*step, 0.5) {
		lo = hi * (1 - step)
		if lo < 1e-3 {
			return hi, nil // as calibratePLD: any noise at all meets the target
		}
		e, err := fine(lo)
		if err != nil || e > target {
			if err == nil {
				eLo = e
			}
			break
		}
		hi, eHi = lo, e
	}
	return narrowSigma(fine, target, tol, lo, eLo, hi, eHi), nil
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
	lo, eLo := hi, math.Inf(1)
	for {
		lo *= 0.8
		e, err := pld(lo)
		if err != nil || e > target {
			if err == nil {
				eLo = e
			}
			break
		}
		hi, eHi = lo, e
		if lo < 1e-3 {
			return hi, nil
		}
	}
	return narrowSigma(pld, target, tol, lo, eLo, hi, eHi), nil
}

// narrowSigma narrows a bracket of σ, ε(lo) = eLo > target ≥ ε(hi) = eHi
// (eLo +Inf where lo was not certified), until unresolved says it is done,
// and returns its certified end hi. A PLD query costs a composition, so
// instead of halving the bracket it aims: ε is close to a power of σ over a
// narrow bracket, and the probe is where the line through the ends in
// (log σ, log ε) meets ε a quarter tolerance below target (regula falsi,
// with the Illinois halving of an end kept twice in a row). Once ε(hi) is
// within the tolerance, the line's crossing of target itself is bracketed
// at the resolution: a probe just below it, then just above. A probe that
// does not halve the bracket is followed by a halving, so the search never
// takes more than about twice bisection's.
func narrowSigma(eps func(float64) (float64, error), target, tol, lo, eLo, hi, eHi float64) float64 {
	gLo, gHi := math.Log(eLo), math.Log(eHi) // log ε at the ends
	wLo, wHi := 1.0, 1.0                     // Illinois weights
	halve, kept := false, 0                  // kept: +1 lo kept last, −1 hi kept last
	// cross is where the weighted line through the ends meets log ε = a.
	cross := func(a float64) (float64, bool) {
		fLo, fHi := wLo*(gLo-a), wHi*(gHi-a)
		if math.IsInf(fLo, 0) || !(fLo > fHi) || !(lo > 0) {
			return 0, false
		}
		return lo * math.Exp(fLo/(fLo-fHi)*(math.Log(hi)-math.Log(lo))), true
	}
	for unresolved(target, eHi, tol, lo, hi) {
		width := hi - lo
		x := lo + width/2
		if !halve {
			if target-eHi > tol {
				if c, ok := cross(math.Log(max(target-tol/4, target*(1-1e-12)))); ok {
					x = c
				}
			} else if c, ok := cross(math.Log(target)); ok {
				if c-lo > SigmaResolution*c/2 {
					x = c * (1 - 0.4*SigmaResolution)
				} else {
					x = c * (1 + 0.4*SigmaResolution)
				}
			} else {
				x = hi * (1 - 0.9*SigmaResolution)
			}
			if !(x > lo && x < hi) {
				x = lo + width/2
			}
		}
		e, err := eps(x)
		if err == nil && e <= target {
			hi, eHi, gHi, wHi = x, e, math.Log(e), 1
			if kept == 1 {
				wLo /= 2 // lo kept twice: Illinois
			}
			kept = 1
		} else {
			lo, eLo, gLo, wLo = x, math.Inf(1), math.Inf(1), 1
			if err == nil {
				eLo, gLo = e, math.Log(e)
			}
			if kept == -1 {
				wHi /= 2
			}
			kept = -1
		}
		// After an aimed probe that did not halve the bracket, halve it.
		halve = !halve && hi-lo > width/2
	}
	return hi
}
