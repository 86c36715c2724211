package models

import "github.com/dptrain/dptrain/models/nn"

// Batch is a chunk of examples. X is N × InputSize float32, row-major and
// sample-major (an image is C×H×W). Classification models read Y (class
// indices); regression models read T (one target per example).
type Batch struct {
	X []float32
	Y []int
	T []float32
	N int
}

// Group is a named, contiguous slice of the flat parameter vector: one
// layer's parameters (weight and bias together) or one parameter tensor.
// Per-layer clipping clips each group separately. It is the engine's
// nn.Group, so that package clip, below models, takes groups as plain
// values without importing models.
type Group = nn.Group

// PerSampleModel is what the DP training loop needs of a model: a flat
// float32 parameter vector and exact per-sample gradients of the loss, in
// two forms that must agree (materialised, or squared norms followed by a
// scaled sum).
//
// A model processes one chunk at a time (a physical batch). Implementations
// keep the chunk's activations between PerSampleNormsSq and AccumulateScaled
// and reuse buffers across calls; MaxBatch bounds the chunk size.
// Implementations are not safe for concurrent use.
type PerSampleModel interface {
	// NumParams is D, the length of Params().
	NumParams() int
	// Params is the live flat parameter vector; optimizers update it in place.
	Params() []float32
	// Groups partitions [0, D) into named, contiguous groups, in order.
	Groups() []Group
	// InputSize is the number of float32 values per example in Batch.X.
	InputSize() int
	// MaxBatch is the largest chunk the model accepts in one call.
	MaxBatch() int

	// PerSampleGrads writes example i's gradient of its own loss into
	// grads[i*D:(i+1)*D] and its loss into losses[i], for i < b.N.
	PerSampleGrads(b Batch, grads []float32, losses []float32) error
	// PerSampleNormsSq writes ‖g_{i,k}‖² (example i, group k) into
	// normsSq[i*len(Groups())+k] without materialising the gradients, and
	// the losses into losses[i]. It retains the chunk for AccumulateScaled.
	PerSampleNormsSq(b Batch, normsSq []float64, losses []float32) error
	// AccumulateScaled adds Σ_i scales[i*K+k] · g_{i,k} to sum (length D),
	// for the chunk last passed to PerSampleNormsSq, K = len(Groups()).
	AccumulateScaled(scales []float32, sum []float32) error

	// Evaluate returns the summed loss and, for classifiers, the number of
	// correct predictions on b, without gradients (dropout off).
	Evaluate(b Batch) (lossSum float64, correct int, err error)
	// SetTraining switches training-only behaviour (dropout) on or off.
	SetTraining(on bool)
}
