package trainer

import (
	"fmt"

	"github.com/dptrain/dptrain/accountant"
)

// breakdown is the ε of a run with private preprocessing, split: the
// prefix events alone, the steps alone, and both composed (the run's
// planned ε), by the accountant that states the run's ε (PLD when it runs,
// else the primary). Composition is tighter than the sum of the parts.
func (a *accounting) breakdown(sigma float64, steps int) (string, error) {
	newAcc := a.newPrimary
	name := "primary"
	if a.pld {
		newAcc, name = newPLD(), "pld"
	}
	pre, err := a.composed(newAcc, true, false, sigma, steps)
	if err != nil {
		return "", err
	}
	st, err := a.composed(newAcc, false, true, sigma, steps)
	if err != nil {
		return "", err
	}
	all, err := a.composed(newAcc, true, true, sigma, steps)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("ε breakdown (%s, δ = %g): private preprocessing alone %.4g (%d event(s)), %d steps alone %.4g, composed %.4g", name, a.cfg.Delta, pre, len(a.prefix), steps, st, all), nil
}

// composed is newAcc's ε at the run's δ after the prefix events (when
// prefix) and steps 1..steps at sigma (when withSteps); runs of equal step
// events are composed with a count.
func (a *accounting) composed(newAcc func() (accountant.Accountant, error), prefix, withSteps bool, sigma float64, steps int) (float64, error) {
	acc, err := newAcc()
	if err != nil {
		return 0, err
	}
	if prefix {
		for _, ev := range a.prefix {
			if err := acc.Compose(ev, 1); err != nil {
				return 0, fmt.Errorf("ε breakdown: %w", err)
			}
		}
	}
	if withSteps {
		for k := 1; k <= steps; {
			ev := a.stepEvent(sigma, k)
			text, n := fmt.Sprintf("%#v", ev), 1
			for k+n <= steps && fmt.Sprintf("%#v", a.stepEvent(sigma, k+n)) == text {
				n++
			}
			if err := acc.Compose(ev, n); err != nil {
				return 0, fmt.Errorf("ε breakdown: %w", err)
			}
			k += n
		}
	}
	b, err := acc.Epsilon(a.cfg.Delta)
	if err != nil {
		return 0, fmt.Errorf("ε breakdown: %w", err)
	}
	return b.Epsilon, nil
}
