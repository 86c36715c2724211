package accountant

import "fmt"

// SetDeferred marks the named accountant as costly to evaluate (the PLD
// accountant composes its distribution when asked): while SkipDeferred is
// on, Bounds, Tightest and TightestFor leave it out. It still composes every
// step, so its account always covers the run.
func (t *Tracker) SetDeferred(name string, deferred bool) error {
	e := t.find(name)
	if e == nil {
		return fmt.Errorf("tracker: no accountant %q", name)
	}
	e.deferred = deferred
	return nil
}

// SkipDeferred turns the leaving out of deferred accountants on or off
// (off by default). A trainer turns it on between evaluation steps.
func (t *Tracker) SkipDeferred(skip bool) { t.skip = skip }

// Deferred returns the names of the deferred accountants, in order added.
func (t *Tracker) Deferred() []string {
	var out []string
	for _, e := range t.entries {
		if e.deferred {
			out = append(out, e.acc.Name())
		}
	}
	return out
}
