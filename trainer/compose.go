package trainer

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/dptrain/dptrain/accountant"
)

// RunsTotal is the privacy account of several runs on the same training
// data under one neighbouring relation: the sequential composition of every
// event each run composed (its prefix and each step's), by the tightest
// accountant that composes them all.
type RunsTotal struct {
	Relation accountant.Relation
	Bound    accountant.Bound
	// Runs are the indices (into ComposeRuns' argument) of the runs the
	// total covers: those whose account is under Relation.
	Runs []int
}

// ComposeRuns composes the accounts of runs trained on the same data (a
// sweep's grid): what choosing among them, or publishing several, costs.
// Each run's events are replayed, in run order, into fresh accountants of
// the kinds the runs used (their primary accountant and, where it ran, the
// PLD); an accountant that cannot compose some event drops out, and the
// tightest remaining bound at delta is the total. Runs whose accounts are
// under different neighbouring relations are composed separately: one
// total per relation, in relation order (bounds of different relations do
// not add). A nil summary, or one of a run that took no step and composed
// nothing, is skipped. The hidden-state bound is not composed (it covers
// one run's final model only), so the total is at least the composition
// bound of every run.
func ComposeRuns(sums []*Summary, delta float64) ([]RunsTotal, error) {
	type group struct {
		runs  []int
		kinds []func() (accountant.Accountant, error)
		names []string
	}
	groups := map[accountant.Relation]*group{}
	for i, s := range sums {
		if s == nil || s.acct == nil || s.Steps == 0 && len(s.acct.prefix) == 0 {
			continue
		}
		rel, err := s.primaryRelation()
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", i+1, err)
		}
		g := groups[rel]
		if g == nil {
			g = &group{}
			groups[rel] = g
		}
		g.runs = append(g.runs, i)
		prim, err := s.acct.newPrimary()
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", i+1, err)
		}
		add := func(name string, f func() (accountant.Accountant, error)) {
			if !slices.Contains(g.names, name) {
				g.names, g.kinds = append(g.names, name), append(g.kinds, f)
			}
		}
		add(prim.Name()+"/"+rel.String(), s.acct.newPrimary)
		if s.acct.pld {
			add("pld", func() (accountant.Accountant, error) { return accountant.NewPLD() })
		}
	}
	var out []RunsTotal
	for _, rel := range []accountant.Relation{accountant.AddRemove, accountant.ReplaceOne} {
		g := groups[rel]
		if g == nil {
			continue
		}
		t := RunsTotal{Relation: rel, Runs: g.runs, Bound: accountant.Bound{Epsilon: math.Inf(1)}}
		var errs []error
		for _, newAcc := range g.kinds {
			b, err := composeInto(newAcc, sums, g.runs, delta)
			switch {
			case err != nil:
				errs = append(errs, err)
			case b.Relation != rel:
				errs = append(errs, fmt.Errorf("%s: a %s bound, not %s", b.Accountant, b.Relation, rel))
			case b.Epsilon < t.Bound.Epsilon:
				t.Bound = b
			}
		}
		if t.Bound.Accountant == "" {
			return nil, fmt.Errorf("no accountant composes every %s run: %w", rel, errors.Join(errs...))
		}
		out = append(out, t)
	}
	return out, nil
}

// composeInto replays the events of runs into a fresh accountant and
// returns its bound at delta.
func composeInto(newAcc func() (accountant.Accountant, error), sums []*Summary, runs []int, delta float64) (accountant.Bound, error) {
	acc, err := newAcc()
	if err != nil {
		return accountant.Bound{}, err
	}
	for _, i := range runs {
		s := sums[i]
		for _, ev := range s.acct.prefix {
			if err := acc.Compose(ev, 1); err != nil {
				return accountant.Bound{}, fmt.Errorf("run %d: %w", i+1, err)
			}
		}
		for step := 1; step <= s.Steps; step++ {
			if err := acc.Compose(s.acct.stepEvent(s.Sigma, step), 1); err != nil {
				return accountant.Bound{}, fmt.Errorf("run %d step %d: %w", i+1, step, err)
			}
		}
	}
	return acc.Epsilon(delta)
}

// primaryRelation is the neighbouring relation of the run's own account
// (its primary accountant's).
func (s *Summary) primaryRelation() (accountant.Relation, error) {
	for _, tb := range s.Bounds {
		if tb.Name == s.acct.primary && tb.Err == nil {
			return tb.Relation, nil
		}
	}
	return 0, fmt.Errorf("its %s account has no bound to compose", s.acct.primary)
}
