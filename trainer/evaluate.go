package trainer

import (
	"github.com/dptrain/dptrain/datasets"
)

// evaluate returns accuracy and mean loss on the first n examples of ds
// (dropout off).
func (s *state) evaluate(ds *datasets.Dataset, n int) (acc, loss float64, err error) {
	s.model.SetTraining(false)
	defer s.model.SetTraining(true)
	mb := s.model.MaxBatch()
	n = min(n, ds.N())
	var lossSum float64
	correct := 0
	idx := make([]int, 0, mb)
	for off := 0; off < n; off += mb {
		if (off/mb)%s.dist.Size() != s.dist.Rank() {
			continue // another rank's chunk
		}
		idx = idx[:0]
		for i := off; i < min(off+mb, n); i++ {
			idx = append(idx, i)
		}
		l, c, err := s.model.Evaluate(s.batches.gather(ds, idx))
		if err != nil {
			return 0, 0, err
		}
		lossSum += l
		correct += c
	}
	lossSum, correct, err = s.evalReduce(lossSum, correct)
	if err != nil {
		return 0, 0, err
	}
	nf := float64(max(n, 1))
	return float64(correct) / nf, lossSum / nf, nil
}

// withReleased runs f with the released parameters in the model: the EMA
// average when it is on (the iterate is put back bit for bit afterwards),
// else the iterate itself.
func (s *state) withReleased(f func() error) error {
	for _, ft := range s.features {
		if r, ok := ft.(releaser); ok {
			p := s.model.Params()
			s.eval.iterate = append(s.eval.iterate[:0], p...)
			defer copy(p, s.eval.iterate)
			if err := r.releasedParams(p); err != nil {
				return err
			}
			break
		}
	}
	return f()
}

// evaluateTest evaluates the released parameters on the test set.
func (s *state) evaluateTest() (acc, loss float64, err error) {
	err = s.withReleased(func() error {
		var e error
		acc, loss, e = s.evaluate(s.data.test, s.data.test.N())
		return e
	})
	return acc, loss, err
}

// evaluateTrain is the released parameters' accuracy on the first
// min(train N, test N) training examples (the cost of one test
// evaluation): a diagnostic of the private data, not covered by the DP
// guarantee, like the per-step loss.
func (s *state) evaluateTrain() (float64, error) {
	var acc float64
	err := s.withReleased(func() error {
		var e error
		acc, _, e = s.evaluate(s.data.train, max(s.data.test.N(), 1))
		return e
	})
	return acc, err
}

// evalCache is the evaluation's state: the training iterate set aside while
// the released (EMA) parameters are in the model, and the most recent test
// evaluation, reused by the summary when it was taken at the final
// parameters.
type evalCache struct {
	iterate []float32
	last    struct {
		step      int
		acc, loss float64
	}
}
