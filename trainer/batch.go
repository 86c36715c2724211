package trainer

import "github.com/dptrain/dptrain/models"

// batchBuilder is the run's one way to make a models.Batch: every chunk a
// model sees (training steps, evaluation, per-instance norms, public
// gradients, input canaries) is built here, so a regression model always
// gets its targets.
type batchBuilder struct {
	// regression: the model reads T (one target per example, the gathered
	// label as a number) instead of Y.
	regression bool
	targets    []float32 // T's buffer, reused
}

// batch wraps len(y) gathered examples; x holds their inputs.
func (bb *batchBuilder) batch(x []float32, y []int) models.Batch {
	b := models.Batch{X: x, Y: y, N: len(y)}
	if bb.regression {
		if cap(bb.targets) < len(y) {
			bb.targets = make([]float32, len(y))
		}
		t := bb.targets[:len(y)]
		for i, v := range y {
			t[i] = float32(v)
		}
		b.T = t
	}
	return b
}
