package trainer

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/dptrain/dptrain/accountant"
)

// loop runs steps first..s.steps.
func (s *state) loop(ctx context.Context, first int, start time.Time) (*Summary, error) {
	cfg := &s.cfg
	rep := newReporter(s.opts.Progress, s.opts.Out, s.steps, first-1, cfg.PrivateDiagnostics)
	defer rep.finish()
	n := s.data.train.N()
	var (
		stopped string
		runErr  error
		done    = first - 1
	)
	for step := first; step <= s.steps; step++ {
		if stop, err := s.anyStop(ctx.Err() != nil); err != nil {
			return nil, err
		} else if stop {
			stopped, runErr = "interrupted", fmt.Errorf("%w at step %d: %v", ErrInterrupted, done, context.Canceled)
			break
		}
		if s.opts.StopAfter > 0 && step > s.opts.StopAfter {
			stopped, runErr = "stopped after the requested number of steps", fmt.Errorf("%w at step %d (StopAfter)", ErrInterrupted, done)
			break
		}
		s.now.step = step
		st, err := s.step()
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", step, err)
		}
		done = step
		s.samples += st.n
		rec := &Record{Step: step, Epoch: float64(step) * float64(cfg.BatchSize) / float64(n),
			BatchSize: st.n, LR: s.lrAt(step), Elapsed: time.Since(start).Seconds()}
		if st.n > 0 {
			rec.Loss = st.lossSum / float64(st.n)
			if st.normsCount > 0 {
				rec.GradNormMean = st.normSum / float64(st.normsCount)
				rec.GradNormMax = st.normMax
			}
			rec.ClippedFrac = float64(st.clipped) / float64(st.n)
		}
		// A stop is a release (of the step it happens at), so it may rest on
		// released quantities only, never on the training loss (one record
		// of 3e38 makes it infinite; the clipper drops non-finite per-sample
		// gradients). A run releasing every step stops on its noised
		// parameters; a final-only run's iterates are hidden, so it checks
		// only the final, released one (see divergedAt in release.go).
		if s.divergedAt(step) {
			return nil, fmt.Errorf("step %d: training diverged (the parameters are not finite); lower lr (now %g) or clip_norm", step, cfg.LR)
		}
		for _, f := range s.features {
			f.record(rec, &st)
		}
		// Deferred accountants (PLD) only at evaluation steps and the end.
		if full := step == s.steps || s.evaluateNow(step); !full {
			s.tracker.SkipDeferred(true)
			rec.Deferred = s.tracker.Deferred()
		}
		s.account(rec)
		s.tracker.SkipDeferred(false)
		if s.evaluateNow(step) {
			acc, loss, err := s.evaluateTest()
			if err != nil {
				return nil, fmt.Errorf("step %d: evaluation: %w", step, err)
			}
			rec.TestAcc, rec.TestLoss = &acc, &loss
			s.eval.last.step, s.eval.last.acc, s.eval.last.loss = step, acc, loss
			if cfg.PrivateDiagnostics {
				trainAcc, err := s.evaluateTrain()
				if err != nil {
					return nil, fmt.Errorf("step %d: evaluation on training examples: %w", step, err)
				}
				rec.TrainAcc = &trainAcc
			}
		}
		if err := s.record(rec, step); err != nil {
			return nil, err
		}
		rep.step(rec)
		if s.out != nil && cfg.CheckpointEvery > 0 && step%cfg.CheckpointEvery == 0 {
			if err := s.checkpoint(step); err != nil {
				return nil, err
			}
		}
	}
	if err := s.markInterruptedRelease(stopped); err != nil {
		return nil, err
	}
	if s.out != nil && stopped != "" {
		if err := s.checkpoint(done); err != nil {
			return nil, err
		}
		s.logf("checkpoint written at step %d (in %s); continue with --resume", done, s.out.private(""))
	}
	sum, err := s.summary(done, stopped)
	if err != nil {
		return nil, err
	}
	return sum, runErr
}

func finiteVec(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// account fills the record's privacy fields from the tracker.
func (s *state) account(rec *Record) {
	rec.Epsilon = map[string]float64{}
	for _, tb := range s.tracker.Bounds(s.cfg.Delta) {
		if tb.Err != nil {
			// No figure (e.g. a PLD query it cannot certify): the best
			// bound comes from the others; the reason is recorded.
			if rec.NotApplicable == nil {
				rec.NotApplicable = map[string]string{}
			}
			rec.NotApplicable[tb.Name] = tb.Err.Error()
			continue
		}
		rec.Epsilon[tb.Name] = tb.Epsilon
		if !tb.Applicable {
			if rec.NotApplicable == nil {
				rec.NotApplicable = map[string]string{}
			}
			rec.NotApplicable[tb.Name] = tb.Reason
		}
	}
	if b, ok := s.best(); ok {
		rec.EpsilonBest, rec.BestAccountant, rec.Relation = b.Epsilon, b.Accountant, b.Relation.String()
	}
}

// best is the tightest valid bound for the run's own relation: the primary
// accountant's relation (add/remove-one for Poisson and twice sampling);
// bounds of other relations are never compared with it.
func (s *state) best() (accountant.Bound, bool) {
	bs := s.tracker.Bounds(s.cfg.Delta)
	var rel accountant.Relation
	for _, tb := range bs {
		if tb.Name == s.acct.primary && tb.Err == nil {
			rel = tb.Relation
		}
	}
	if rel == 0 {
		return accountant.Bound{}, false
	}
	b, err := s.tracker.TightestFor(s.cfg.Delta, rel)
	return b, err == nil
}
