package trainer

import (
	"errors"
	"fmt"

	"github.com/dptrain/dptrain/mechanism"
)

// FailedRunError is Run's error when a run fails after it began training
// (a step's error, divergence, a write that failed): the steps it took drew
// on the training data whatever became of the run, so Account holds their
// privacy account, which a composition over runs (ComposeRuns) charges like
// a finished run's. Account carries the account only: no test figures, and
// nothing of it was written to release/ by the failure.
type FailedRunError struct {
	Err     error
	Account *Summary
}

func (e *FailedRunError) Error() string { return e.Err.Error() }
func (e *FailedRunError) Unwrap() error { return e.Err }

// PartialAccount is the account a failed run's error carries (nil when err
// is not a FailedRunError, e.g. a refusal before training began).
func PartialAccount(err error) *Summary {
	var f *FailedRunError
	if errors.As(err, &f) {
		return f.Account
	}
	return nil
}

// failedRun wraps err, the error that ended the run, with the account of
// every step up to and including the one being taken (charged: the failing
// step may already have released its noisy sum, so it counts in full). A
// run that charged nothing returns err unchanged.
func (s *state) failedRun(err error, charged int) error {
	if charged < 1 && (s.acct == nil || len(s.acct.prefix) == 0) {
		return err
	}
	sum := &Summary{
		Dataset: string(s.cfg.Dataset), Source: s.data.source, Model: string(s.cfg.Model), Params: s.model.NumParams(),
		TrainN: s.data.train.N(), TestN: s.data.test.N(), Steps: charged, PlannedStep: s.steps,
		Sigma: s.sigma, Calibrated: s.cfg.Sigma == 0, Q: s.acct.q, Delta: s.cfg.Delta, Epsilon: map[string]float64{},
		Stopped: fmt.Sprintf("failed at step %d (charged in full): %v", charged, err), OutDir: s.cfg.OutDir,
		Private: s.cfg.FinalOnly, NoiseSeeded: s.cfg.Seeded, PrivateRelease: !s.cfg.Seeded && s.opts.Noise == nil,
		CoveredN: s.data.train.N(), TestWithheld: true, cfg: s.cfg, acct: s.acct, Noise: NoiseContinuous, partial: true,
	}
	if _, ok := s.noise.(*mechanism.LatticeNoise); ok {
		sum.Noise = NoiseLattice
	}
	// The tracker names the run's relation; the bound itself is the
	// composition of every charged step (the tracker may not have taken
	// in the failing one).
	sum.Bounds = s.tracker.Bounds(s.cfg.Delta)
	totals, cerr := ComposeRuns([]*Summary{sum}, s.cfg.Delta)
	if cerr != nil {
		return fmt.Errorf("%w (and its partial account failed: %v)", err, cerr)
	}
	if len(totals) == 1 {
		sum.Best = totals[0].Bound
		sum.Epsilon[sum.Best.Accountant] = sum.Best.Epsilon
	}
	sum.Claim = s.claim(sum)
	return &FailedRunError{Err: err, Account: sum}
}
