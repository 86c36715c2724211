package trainer

import (
	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/models"
)

// batchBuilder is the run's one way to make a models.Batch: every chunk a
// model sees (training steps, evaluation, per-instance norms, public
// gradients, input canaries) is built here, so a regression model always
// gets its targets. It owns the buffers of the one chunk in flight (a
// step's, an evaluation's, or the per-instance norms' before a step), each
// max_physical_batch examples long.
type batchBuilder struct {
	// regression: the model reads T (one target per example, the gathered
	// label as a number) instead of Y.
	regression bool
	targets    []float32 // T's buffer, reused
	x          []float32 // the chunk's inputs
	y          []int     // its labels
	losses     []float32 // its per-example losses
	// rows holds materialised per-sample gradients (b×D) for the paths
	// that need them, and the public gradients of subspace clipping
	// between steps; nil when no path needs it.
	rows []float32
}

// gather loads the examples idx of ds into the chunk buffers.
func (bb *batchBuilder) gather(ds *datasets.Dataset, idx []int) models.Batch {
	b, in := len(idx), ds.Dim()
	ds.Gather(idx, bb.x[:b*in], bb.y[:b])
	return bb.batch(bb.x[:b*in], bb.y[:b])
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
