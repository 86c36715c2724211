package mechanism

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dptrain/dptrain/accountant"
)

// Run is what the accountants need of a training run beyond its step
// mechanism: the optimizer the hidden-state bound's conditions name, and
// which accountant the user asked to calibrate σ.
type Run struct {
	Optimizer   string // "sgd", "momentum" or "adam"
	Momentum    float64
	WeightDecay float64
	// RDPOnly: the user asked for the RDP accountant; the PLD accountant,
	// where it applies, still runs beside it but does not calibrate σ.
	RDPOnly bool
}

// HiddenCountReason marks the hidden-state bound not applicable to a run
// that releases a noised clipped count: an intermediate release its
// analysis does not cover.
const HiddenCountReason = "the run releases a noised clipped count at every step, which the hidden-state analysis (last iterate only) does not cover"

// Accounts is the mechanism's decision of which accountants a run is
// charged to and the event each is charged at every step: the primary
// accountant of the mechanism (NewAccountant) with StepEvent; the PLD
// accountant beside it where it supports every event (Poisson sampling, no
// preprocessing, no subspace clipping), with the same events; a plain RDP
// account of the same steps, shown for comparison and never a bound, when
// preprocessing is accounted by SRDP; and the hidden-state accountant when
// the iterates are projected, with HiddenEvent.
type Accounts struct {
	m   *Mechanism
	run Run
	// PLD: the PLD accountant runs beside the primary one; PLDErr says why
	// it does not (nil when it does).
	PLD    bool
	PLDErr error
	// CalibratePLD: the PLD accountant calibrates σ.
	CalibratePLD bool
	// Hidden: the hidden-state accountant runs beside the primary one.
	Hidden bool
	// Plain is the name of the comparison RDP account ("": none).
	Plain string
	// Notes say where a bound is shown but does not apply, or is not
	// computed.
	Notes []string
}

// Accounts decides the run's accountants.
func (m *Mechanism) Accounts(run Run) (*Accounts, error) {
	a := &Accounts{m: m, run: run, PLDErr: m.pldApplies()}
	a.PLD = a.PLDErr == nil
	a.CalibratePLD = a.PLD && !run.RDPOnly
	if m.MMCC() {
		// The primary accountant is the PLD itself (NewAccountant), which
		// calibrates as the primary: no second PLD beside it.
		if run.RDPOnly {
			return nil, fmt.Errorf("%w: %d-banded noise under Poisson sampling is accounted by MMCC, whose mixtures of Gaussians have no RDP bound here; use the PLD accountant", ErrUnsupported, m.spec.Bands)
		}
		a.PLD, a.PLDErr, a.CalibratePLD = false, errors.New("the PLD accountant is the primary one"), false
	}
	if m.spec.Preprocess != nil {
		a.Plain = "rdp-ignoring-preprocessing"
	}
	if m.spec.Radius > 0 && m.spec.Preprocess == nil {
		if len(m.spec.Prefix) > 0 {
			a.Notes = append(a.Notes, "hidden-state bound not computed: private feature preprocessing is not a projected SGD step")
		} else {
			a.Hidden = true
		}
	}
	return a, nil
}

// pldApplies is nil when the PLD accountant supports every event the run
// charges: DP-SGD with Poisson sampling.
func (m *Mechanism) pldApplies() error {
	if sp := m.spec; sp.Preprocess != nil || sp.Clip == Subspace || (sp.Sampler != Poisson && sp.Sampler != Cyclic) {
		return errors.New("accountant pld: needs Poisson sampling without preprocessing or subspace clipping")
	}
	p, err := accountant.NewPLD()
	if err != nil {
		return err
	}
	for _, ev := range append(slices.Clone(m.prefix), m.StepEvent(1, 1)) {
		if err := p.Supports(ev); err != nil {
			return err
		}
	}
	return nil
}

// OuterClip reports whether the steps clip the mean clipped gradient to C:
// where the hidden-state accountant runs and the clip keeps the account
// (Mechanism.OuterClip).
func (a *Accounts) OuterClip() bool { return a.Hidden && a.m.OuterClip() }

// NewTracker builds the run's tracker: the primary accountant, then the
// others this run is charged to, each marked as the mechanism requires.
// It returns the primary's name and the notes on bounds shown but not
// applicable.
func (a *Accounts) NewTracker() (t *accountant.Tracker, primary string, notes []string, err error) {
	prim, err := a.m.NewAccountant()
	if err != nil {
		return nil, "", nil, err
	}
	if t, err = accountant.NewTracker(prim); err != nil {
		return nil, "", nil, err
	}
	notes = slices.Clone(a.Notes)
	if a.PLD {
		p, err := accountant.NewPLD()
		if err != nil {
			return nil, "", nil, err
		}
		if err := t.Add(p); err != nil {
			return nil, "", nil, err
		}
		if err := t.SetDeferred(p.Name(), true); err != nil {
			return nil, "", nil, err
		}
	}
	if a.Plain != "" {
		// Plain RDP of the same steps: it ignores the data-dependent
		// preprocessing, so it is not a bound for this run.
		plain, err := accountant.NewRDP(accountant.WithName(a.Plain))
		if err != nil {
			return nil, "", nil, err
		}
		if err := t.Add(plain); err != nil {
			return nil, "", nil, err
		}
		if err := t.SetApplicable(plain.Name(), false, "ignores the non-private preprocessing fitted on the training data"); err != nil {
			return nil, "", nil, err
		}
	}
	if a.Hidden {
		if err := t.Add(accountant.NewHidden()); err != nil {
			return nil, "", nil, err
		}
		run := accountant.HiddenStateRun{
			ProjectEveryStep: true,
			Optimizer:        a.run.Optimizer,
			Momentum:         a.run.Momentum,
			// A final-only run writes nothing intermediate to release/
			// (metrics carry only the account, evaluation is at the end,
			// checkpoints stay in private/).
			FinalModelOnly: a.m.spec.FinalOnly,
			WeightDecay:    a.run.WeightDecay,
			Sampling:       string(a.m.spec.Sampler),
			// Without the outer clip the expected-batch divisor breaks A3.
			ExpectedBatchNormalization: !a.OuterClip(),
		}
		if a.run.Optimizer != "momentum" {
			run.Momentum = 0
		}
		if err := run.MarkTracker(t); err != nil {
			return nil, "", nil, err
		}
		if ok, why := run.Qualifies(); !ok {
			notes = append(notes, "hidden-state bound shown but not valid for this run: "+why)
		} else if a.m.spec.ClippedCountSigma > 0 {
			if err := t.SetApplicable("hidden", false, HiddenCountReason); err != nil {
				return nil, "", nil, err
			}
			notes = append(notes, "hidden-state bound shown but not valid for this run: "+HiddenCountReason)
		}
	}
	return t, prim.Name(), notes, nil
}

// Events is the event each accountant is charged for one step: ev (the
// primary's, from StepEvent, or a prefix event) for the primary and the
// PLD accountant, HiddenEvent for the hidden-state accountant, and the
// plain step Event for the comparison account. nil: only the primary runs.
func (a *Accounts) Events(primary string, ev accountant.Event, sigma, lr float64) map[string]accountant.Event {
	if !a.Hidden && a.Plain == "" {
		return nil
	}
	evs := map[string]accountant.Event{primary: ev}
	if a.Hidden {
		evs["hidden"] = a.m.HiddenEvent(sigma, lr)
	}
	if a.Plain != "" {
		evs[a.Plain] = a.m.Event(sigma)
	}
	if a.PLD {
		evs["pld"] = ev
	}
	return evs
}
