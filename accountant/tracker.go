package accountant

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
)

// Tracker runs several accountants side by side over one training run: one
// Step per training step, and a bound from each accountant at any time.
//
// Each accountant is either applicable to the run or not (with a reason,
// e.g. the hidden-state bound when intermediate iterates are released); a
// non-applicable accountant still composes every event so its figure can be
// shown, but it never counts as the run's bound. An accountant that fails to
// compose an event (unsupported, mixed relations) stops and is reported as
// failed: its account no longer covers the run.
//
// A Tracker is not safe for concurrent use.
type Tracker struct {
	entries []*trackerEntry
	steps   int64
	skip    bool // Bounds leaves out deferred accountants (SkipDeferred)
}

type trackerEntry struct {
	acc        Accountant
	applicable bool
	reason     string
	failed     string // why the accountant stopped; "" while it runs
	deferred   bool   // costly to evaluate: left out while skip is set
}

// TrackedBound is one accountant's bound as the tracker reports it.
type TrackedBound struct {
	Bound
	Name       string // the accountant's Name
	Applicable bool   // whether this bound may be used for the run
	Reason     string // why it is not applicable (or stopped), if so
	Err        error  // the accountant could not produce a bound at this δ
}

// NewTracker returns a tracker over accs, all applicable. Names must be
// distinct (they key the serialised state).
func NewTracker(accs ...Accountant) (*Tracker, error) {
	t := &Tracker{}
	for _, a := range accs {
		if err := t.Add(a); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Add adds an applicable accountant. It must not have composed anything
// the tracker's others have not (add accountants before the first Step).
func (t *Tracker) Add(a Accountant) error {
	if a == nil {
		return fmt.Errorf("tracker: nil accountant")
	}
	if t.find(a.Name()) != nil {
		return fmt.Errorf("tracker: duplicate accountant name %q", a.Name())
	}
	t.entries = append(t.entries, &trackerEntry{acc: a, applicable: true})
	return nil
}

func (t *Tracker) find(name string) *trackerEntry {
	for _, e := range t.entries {
		if e.acc.Name() == name {
			return e
		}
	}
	return nil
}

// SetApplicable marks the named accountant as applicable to the run or not;
// reason (required when not applicable) says why.
func (t *Tracker) SetApplicable(name string, applicable bool, reason string) error {
	e := t.find(name)
	if e == nil {
		return fmt.Errorf("tracker: no accountant %q", name)
	}
	if !applicable && reason == "" {
		return fmt.Errorf("tracker: marking %q not applicable needs a reason", name)
	}
	e.applicable, e.reason = applicable, reason
	if applicable {
		e.reason = ""
	}
	return nil
}

// Accountant returns the named accountant, or nil.
func (t *Tracker) Accountant(name string) Accountant {
	if e := t.find(name); e != nil {
		return e.acc
	}
	return nil
}

// Steps returns the number of Step calls composed so far.
func (t *Tracker) Steps() int64 { return t.steps }

// Step composes one training step's event into every running accountant.
// An invalid event is refused before anything changes. An accountant that
// cannot compose ev stops (reported by Bounds as failed) and Step returns an
// error naming it; the other accountants have composed the step.
func (t *Tracker) Step(ev Event) error {
	if ev == nil {
		return invalidf("tracker: nil event")
	}
	if err := ev.Validate(); err != nil {
		return fmt.Errorf("tracker step %d: %w", t.steps+1, err)
	}
	var errs []error
	for _, e := range t.entries {
		if e.failed != "" {
			continue
		}
		if err := e.acc.Compose(ev, 1); err != nil {
			e.failed = fmt.Sprintf("stopped at step %d: %v", t.steps+1, err)
			errs = append(errs, fmt.Errorf("tracker: accountant %s stopped: %w", e.acc.Name(), err))
		}
	}
	t.steps++
	return errors.Join(errs...)
}

// Bounds returns every accountant's bound at delta, in the order added.
func (t *Tracker) Bounds(delta float64) []TrackedBound {
	out := make([]TrackedBound, 0, len(t.entries))
	for _, e := range t.entries {
		if t.skip && e.deferred {
			continue
		}
		tb := TrackedBound{Name: e.acc.Name(), Applicable: e.applicable && e.failed == "", Reason: e.reason}
		if e.failed != "" {
			tb.Reason = e.failed
			tb.Err = errors.New(e.failed)
		} else {
			tb.Bound, tb.Err = e.acc.Epsilon(delta)
		}
		out = append(out, tb)
	}
	return out
}

// Tightest returns, for each neighbouring relation some applicable
// accountant reports, the bound with the smallest ε among the applicable
// accountants of that relation, sorted by relation. Bounds of different
// relations are never compared (docs/accountants.md#relations): the caller
// picks the relation its run is defined for.
func (t *Tracker) Tightest(delta float64) []Bound {
	best := map[Relation]Bound{}
	for _, tb := range t.Bounds(delta) {
		if !tb.Applicable || tb.Err != nil || math.IsNaN(tb.Epsilon) {
			continue
		}
		if cur, ok := best[tb.Relation]; !ok || tb.Epsilon < cur.Epsilon {
			best[tb.Relation] = tb.Bound
		}
	}
	out := make([]Bound, 0, len(best))
	for _, b := range best {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Relation < out[j].Relation })
	return out
}

// TightestFor returns the tightest applicable bound for relation rel, or
// an error when no applicable accountant reports one.
func (t *Tracker) TightestFor(delta float64, rel Relation) (Bound, error) {
	for _, b := range t.Tightest(delta) {
		if b.Relation == rel {
			return b, nil
		}
	}
	return Bound{}, fmt.Errorf("tracker: no applicable %s bound at delta %v", rel, delta)
}

type trackerState struct {
	Steps       int64               `json:"steps"`
	Accountants []trackedAccountant `json:"accountants"`
}

type trackedAccountant struct {
	Name       string          `json:"name"`
	Applicable bool            `json:"applicable"`
	Reason     string          `json:"reason,omitempty"`
	Failed     string          `json:"failed,omitempty"`
	State      json.RawMessage `json:"state"`
}

// MarshalJSON writes the tracker: step count, each accountant's flags and
// its own serialised state.
func (t *Tracker) MarshalJSON() ([]byte, error) {
	st := trackerState{Steps: t.steps}
	for _, e := range t.entries {
		raw, err := e.acc.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("tracker: accountant %s: %w", e.acc.Name(), err)
		}
		st.Accountants = append(st.Accountants, trackedAccountant{
			Name: e.acc.Name(), Applicable: e.applicable, Reason: e.reason, Failed: e.failed, State: raw,
		})
	}
	return json.Marshal(st)
}

// UnmarshalJSON restores a saved tracker into t, which must hold accountants
// of the same names (constructed as for the original run); each restores its
// own state. On error t must be discarded.
func (t *Tracker) UnmarshalJSON(data []byte) error {
	var st trackerState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("tracker state: %w", err)
	}
	if st.Steps < 0 {
		return fmt.Errorf("tracker state: negative step count %d", st.Steps)
	}
	if len(st.Accountants) != len(t.entries) {
		return fmt.Errorf("tracker state: %d accountants saved, %d in the tracker", len(st.Accountants), len(t.entries))
	}
	for _, s := range st.Accountants {
		if t.find(s.Name) == nil {
			return fmt.Errorf("tracker state: saved accountant %q is not in the tracker", s.Name)
		}
	}
	for _, s := range st.Accountants {
		e := t.find(s.Name)
		if err := e.acc.UnmarshalJSON(s.State); err != nil {
			return fmt.Errorf("tracker state: accountant %s: %w", s.Name, err)
		}
		if e.acc.Name() != s.Name {
			return fmt.Errorf("tracker state: accountant %q restored as %q", s.Name, e.acc.Name())
		}
		e.applicable, e.reason, e.failed = s.Applicable, s.Reason, s.Failed
	}
	t.steps = st.Steps
	return nil
}
