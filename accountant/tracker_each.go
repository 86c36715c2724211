package accountant

import (
	"errors"
	"fmt"
)

// StepEach composes one training step described separately for each
// accountant, keyed by accountant name. One mechanism ran, but accountants
// model it at different levels: the RDP accountant sees a Poisson-sampled
// Gaussian in units of the clip norm, the hidden-state accountant sees a
// projected SGD step with noise in parameter space. Every accountant must
// have a description; validation happens before anything is composed.
func (t *Tracker) StepEach(evs map[string]Event) error {
	for _, e := range t.entries {
		ev, ok := evs[e.acc.Name()]
		if !ok || ev == nil {
			return invalidf("tracker step %d: no event for accountant %s", t.steps+1, e.acc.Name())
		}
		if err := ev.Validate(); err != nil {
			return fmt.Errorf("tracker step %d, accountant %s: %w", t.steps+1, e.acc.Name(), err)
		}
	}
	if len(evs) != len(t.entries) {
		return invalidf("tracker step %d: %d events for %d accountants", t.steps+1, len(evs), len(t.entries))
	}
	var errs []error
	for _, e := range t.entries {
		if e.failed != "" {
			continue
		}
		if err := e.acc.Compose(evs[e.acc.Name()], 1); err != nil {
			e.failed = fmt.Sprintf("stopped at step %d: %v", t.steps+1, err)
			errs = append(errs, fmt.Errorf("tracker: accountant %s stopped: %w", e.acc.Name(), err))
		}
	}
	t.steps++
	return errors.Join(errs...)
}
