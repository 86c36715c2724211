package models

import (
	"fmt"

	"github.com/dptrain/dptrain/models/nn"
)

// Options are the settings every zoo constructor takes.
type Options struct {
	// MaxBatch is the largest chunk processed at once (the physical batch);
	// 0 picks the model's default (256 for linear models and MLPs, 64 for
	// CNNs and ResNets).
	MaxBatch int
	// Seed seeds the parameter initialisation.
	Seed uint64

	weightStd bool // from Spec.WeightStd
}

func (o Options) maxBatch(def int) int {
	if o.MaxBatch > 0 {
		return o.MaxBatch
	}
	return def
}

// Net is a zoo model: an nn.Network[float32] behind the PerSampleModel
// contract, with an architecture name used by Save and Load.
type Net struct {
	arch       string
	net        *nn.Network[float32]
	groups     []Group
	classifier bool
	usage      Meta // Input (less Shape), Classes and Preprocess, for Meta
}

var _ PerSampleModel = (*Net)(nil)

// newNet wraps net; arch names the architecture exactly (sizes included).
func newNet(arch string, net *nn.Network[float32], classifier bool) *Net {
	m := &Net{arch: arch, net: net, classifier: classifier}
	for _, g := range net.Groups() {
		m.groups = append(m.groups, Group{Name: g.Name, Offset: g.Offset, Len: g.Len})
	}
	return m
}

// Arch is the architecture's name, e.g. "mlp(784,256,10,relu)".
func (m *Net) Arch() string { return m.arch }

// Network is the underlying engine network.
func (m *Net) Network() *nn.Network[float32] { return m.net }

// Classifier reports whether the model reads labels (Batch.Y) rather than
// real targets (Batch.T).
func (m *Net) Classifier() bool { return m.classifier }

func (m *Net) NumParams() int      { return m.net.NumParams() }
func (m *Net) Params() []float32   { return m.net.Params() }
func (m *Net) Groups() []Group     { return m.groups }
func (m *Net) InputSize() int      { return m.net.InputShape().Size() }
func (m *Net) MaxBatch() int       { return m.net.MaxBatch() }
func (m *Net) SetTraining(on bool) { m.net.SetTraining(on) }

func target(b Batch) nn.Target[float32] { return nn.Target[float32]{Y: b.Y, T: b.T} }

func (m *Net) PerSampleGrads(b Batch, grads []float32, losses []float32) error {
	return m.net.PerSampleGrads(b.X, target(b), b.N, grads, losses)
}

func (m *Net) PerSampleNormsSq(b Batch, normsSq []float64, losses []float32) error {
	return m.net.PerSampleNormsSq(b.X, target(b), b.N, normsSq, losses)
}

func (m *Net) AccumulateScaled(scales []float32, sum []float32) error {
	return m.net.AccumulateScaled(scales, sum)
}

// BatchGrad adds the ordinary, non-private gradient Σ_i g_i of the chunk b to
// sum (length D) and writes the losses: the non-DP baseline step.
func (m *Net) BatchGrad(b Batch, sum []float32, losses []float32) error {
	return m.net.BatchGrad(b.X, target(b), b.N, sum, losses)
}

func (m *Net) Evaluate(b Batch) (float64, int, error) {
	if b.N > m.MaxBatch() {
		if err := checkBatch(b, m.InputSize(), m.classifier); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", m.arch, err)
		}
		var loss float64
		correct := 0
		for lo := 0; lo < b.N; lo += m.MaxBatch() {
			l, c, err := m.Evaluate(chunkOf(b, m.InputSize(), lo, min(b.N, lo+m.MaxBatch())))
			if err != nil {
				return 0, 0, err
			}
			loss += l
			correct += c
		}
		return loss, correct, nil
	}
	l, c, err := m.net.Evaluate(b.X, target(b), b.N)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", m.arch, err)
	}
	return l, c, nil
}

// chunkOf returns samples [lo, hi) of b.
func chunkOf(b Batch, inSize, lo, hi int) Batch {
	c := Batch{X: b.X[lo*inSize : hi*inSize], N: hi - lo}
	if b.Y != nil {
		c.Y = b.Y[lo:hi]
	}
	if b.T != nil {
		c.T = b.T[lo:hi]
	}
	return c
}

// checkBatch reports a batch whose slices are shorter than b.N samples.
func checkBatch(b Batch, inSize int, classifier bool) error {
	switch {
	case b.N < 0:
		return fmt.Errorf("batch of %d samples", b.N)
	case len(b.X) < b.N*inSize:
		return fmt.Errorf("batch has %d input values for %d samples of size %d", len(b.X), b.N, inSize)
	case classifier && len(b.Y) < b.N:
		return fmt.Errorf("batch has %d labels for %d samples", len(b.Y), b.N)
	case !classifier && len(b.T) < b.N:
		return fmt.Errorf("batch has %d targets for %d samples", len(b.T), b.N)
	}
	return nil
}

// Tensors lists the parameter tensors with their shapes, in the order of
// Params (see nn.Network.Tensors).
func (m *Net) Tensors() []nn.ParamTensor { return m.net.Tensors() }

// Factored reports whether the model's per-sample gradients are rank one
// per layer (every parametric layer Linear), so Factors applies.
func (m *Net) Factored() bool { return m.net.AllLinear() }

// Factors computes the chunk's per-sample gradients in factored form (see
// nn.Network.Factors) and its losses; ok is false when the model is not
// all Linear.
func (m *Net) Factors(b Batch, losses []float32) ([]nn.LinearFactors[float32], bool, error) {
	return m.net.Factors(b.X, target(b), b.N, losses)
}

// LayerGrads computes the chunk's per-sample gradients and losses and
// returns them per parametric layer, where the engine keeps them (see
// nn.Network.LayerGrads): no b×D buffer is filled.
func (m *Net) LayerGrads(b Batch, losses []float32) ([]nn.LayerGrads[float32], error) {
	ls, err := m.net.LayerGrads(b.X, target(b), b.N, losses)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.arch, err)
	}
	return ls, nil
}

// LayerGradsAsKept is LayerGrads with the Linear layers as their factors
// (nn.Network.LayerGradsAsKept).
func (m *Net) LayerGradsAsKept(b Batch, losses []float32) ([]nn.LayerGrads[float32], error) {
	ls, err := m.net.LayerGradsAsKept(b.X, target(b), b.N, losses)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.arch, err)
	}
	return ls, nil
}
