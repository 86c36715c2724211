package graph

import (
	"fmt"

	"github.com/dptrain/dptrain/models"
)

// Model is a float32 Net behind the models.PerSampleModel contract, for the
// trainer. Its graph is compiled for MaxBatch examples; smaller chunks are
// padded and masked.
type Model struct {
	net *Net[float32]
}

var _ models.PerSampleModel = (*Model)(nil)

// NewModel builds spec for chunks of up to maxBatch examples, initialised
// from seed.
func NewModel(spec Spec, maxBatch int, seed uint64) (*Model, error) {
	n, err := NewNet[float32](spec, maxBatch, seed)
	if err != nil {
		return nil, err
	}
	return &Model{net: n}, nil
}

// Net is the underlying engine.
func (m *Model) Net() *Net[float32] { return m.net }

func (m *Model) NumParams() int         { return m.net.NumParams() }
func (m *Model) Params() []float32      { return m.net.Params() }
func (m *Model) Groups() []models.Group { return m.net.Groups() }
func (m *Model) InputSize() int         { return m.net.InputSize() }
func (m *Model) MaxBatch() int          { return m.net.MaxBatch() }
func (m *Model) SetTraining(on bool)    {} // no dropout in this backend
func (m *Model) Close() error           { return m.net.Close() }

func (m *Model) check(b models.Batch) error {
	if b.N < 0 || b.N > m.net.MaxBatch() {
		return fmt.Errorf("graph: chunk of %d examples, MaxBatch is %d", b.N, m.net.MaxBatch())
	}
	return nil
}

// PerSampleGrads implements models.PerSampleModel.
func (m *Model) PerSampleGrads(b models.Batch, grads []float32, losses []float32) error {
	if err := m.check(b); err != nil {
		return err
	}
	return m.net.PerSampleGrads(b.X, b.Y, b.T, b.N, grads, losses)
}

// PerSampleNormsSq implements models.PerSampleModel.
func (m *Model) PerSampleNormsSq(b models.Batch, normsSq []float64, losses []float32) error {
	if err := m.check(b); err != nil {
		return err
	}
	return m.net.PerSampleNormsSq(b.X, b.Y, b.T, b.N, normsSq, losses)
}

// AccumulateScaled implements models.PerSampleModel.
func (m *Model) AccumulateScaled(scales []float32, sum []float32) error {
	return m.net.AccumulateScaled(scales, sum)
}

// Evaluate implements models.PerSampleModel; batches larger than MaxBatch are
// evaluated in chunks.
func (m *Model) Evaluate(b models.Batch) (float64, int, error) {
	in, mb := m.net.InputSize(), m.net.MaxBatch()
	if (b.Y != nil && len(b.Y) < b.N) || (b.T != nil && len(b.T) < b.N) {
		return 0, 0, fmt.Errorf("graph: batch has %d labels and %d targets for %d examples", len(b.Y), len(b.T), b.N)
	}
	var loss float64
	var correct int
	for lo := 0; lo < b.N; lo += mb {
		hi := min(lo+mb, b.N)
		var y []int
		var t []float32
		if b.Y != nil {
			y = b.Y[lo:hi]
		}
		if b.T != nil {
			t = b.T[lo:hi]
		}
		if len(b.X) < hi*in {
			return 0, 0, fmt.Errorf("graph: batch X has %d values for %d examples", len(b.X), b.N)
		}
		l, c, err := m.net.Evaluate(b.X[lo*in:hi*in], y, t, hi-lo)
		if err != nil {
			return 0, 0, err
		}
		loss += l
		correct += c
	}
	return loss, correct, nil
}
