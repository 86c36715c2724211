package nn

import (
	"errors"
	"fmt"

	"github.com/dptrain/dptrain/rng"
)

// Group is a named, contiguous slice [Offset, Offset+Len) of the flat
// parameter vector: one parametric layer (weight and bias together).
type Group struct {
	Name   string
	Offset int
	Len    int
}

// Network is a layer stack ending in a Loss, with all parameters in one flat
// vector. It processes chunks of at most MaxBatch samples and keeps the last
// chunk's activations for AccumulateScaled. Not safe for concurrent use.
type Network[T Float] struct {
	body     *Sequential[T]
	loss     Loss[T]
	in, out  Shape
	maxBatch int

	params []T
	leaves []ParamLayer[T]
	groups []Group

	dz     []T
	losses []T
	train  bool
	chunk  int // samples of the retained chunk; −1 when none

	layerBufs    [][]T              // LayerGrads' per-layer buffers (nil: in place or unused)
	layerGrads   []LayerGrads[T]    // LayerGrads' result, reused
	layerFactors []LinearFactors[T] // LayerGradsAsKept's Linear factors, reused
}

// ErrNoChunk is returned by AccumulateScaled when no chunk is retained.
var ErrNoChunk = errors.New("nn: AccumulateScaled without a preceding PerSampleNormsSq or PerSampleGrads")

// NewNetwork builds layers for per-sample inputs of shape in and chunks of up
// to maxBatch samples, allocating every buffer, and lays the parameters out
// in one flat vector (zero until Init or SetParams). Group names are module
// paths: "2.conv2d", "4.residual.0.1.conv2d".
func NewNetwork[T Float](in Shape, maxBatch int, loss Loss[T], layers ...Layer[T]) (*Network[T], error) {
	if !in.valid() {
		return nil, fmt.Errorf("nn: invalid input shape %v", in)
	}
	if maxBatch <= 0 {
		return nil, fmt.Errorf("nn: max batch must be positive, got %d", maxBatch)
	}
	n := &Network[T]{body: NewSequential(layers...), loss: loss, in: in, maxBatch: maxBatch, chunk: -1, train: true}
	out, err := n.body.Build(in, maxBatch)
	if err != nil {
		return nil, fmt.Errorf("nn: %w", err)
	}
	if err := loss.Check(out); err != nil {
		return nil, fmt.Errorf("nn: %w", err)
	}
	n.out = out
	for i, l := range layers {
		n.collect(fmt.Sprintf("%d.%s", i, l.Kind()), l)
	}
	n.params = make([]T, 0)
	total := 0
	for _, g := range n.groups {
		total += g.Len
	}
	n.params = make([]T, total)
	for k, l := range n.leaves {
		g := n.groups[k]
		l.Bind(n.params[g.Offset : g.Offset+g.Len : g.Offset+g.Len])
	}
	n.dz = make([]T, maxBatch*out.Size())
	n.losses = make([]T, maxBatch)
	return n, nil
}

// collect appends the parametric layers under l, depth first, with names.
func (n *Network[T]) collect(name string, l Layer[T]) {
	if p, ok := l.(ParamLayer[T]); ok && p.NumParams() > 0 {
		off := 0
		if k := len(n.groups); k > 0 {
			off = n.groups[k-1].Offset + n.groups[k-1].Len
		}
		n.groups = append(n.groups, Group{Name: name, Offset: off, Len: p.NumParams()})
		n.leaves = append(n.leaves, p)
	}
	if c, ok := l.(Container[T]); ok {
		for i, ch := range c.Children() {
			n.collect(fmt.Sprintf("%s.%d.%s", name, i, ch.Kind()), ch)
		}
	}
}

// Params is the live flat parameter vector.
func (n *Network[T]) Params() []T { return n.params }

// NumParams is len(Params()).
func (n *Network[T]) NumParams() int { return len(n.params) }

// Groups lists the parametric layers' slices of Params, in order.
func (n *Network[T]) Groups() []Group { return n.groups }

// InputShape is the per-sample input shape.
func (n *Network[T]) InputShape() Shape { return n.in }

// Loss is the network's loss.
func (n *Network[T]) Loss() Loss[T] { return n.loss }

// OutputShape is the per-sample output shape (before the loss).
func (n *Network[T]) OutputShape() Shape { return n.out }

// MaxBatch is the largest chunk accepted.
func (n *Network[T]) MaxBatch() int { return n.maxBatch }

// SetTraining switches training-only behaviour (dropout) on or off.
func (n *Network[T]) SetTraining(on bool) { n.train = on }

// Init draws every layer's initial parameters from s, one child stream per
// group (named by the group), so adding a layer does not shift the others.
func (n *Network[T]) Init(s *rng.Stream) {
	for k, l := range n.leaves {
		l.Init(s.Child(n.groups[k].Name))
	}
}

func (n *Network[T]) check(x []T, num int) error {
	if num < 0 || num > n.maxBatch {
		return fmt.Errorf("nn: chunk of %d samples, max batch is %d", num, n.maxBatch)
	}
	if len(x) < num*n.in.Size() {
		return fmt.Errorf("nn: %d input values for %d samples of size %d", len(x), num, n.in.Size())
	}
	return nil
}

// Forward returns the network outputs for num samples (an n×OutputShape
// slice owned by the network, valid until the next call).
func (n *Network[T]) Forward(x []T, num int) ([]T, error) {
	if err := n.check(x, num); err != nil {
		return nil, err
	}
	n.chunk = -1
	return n.body.Forward(x, num, n.train), nil
}

// forwardBackward runs the chunk through the layers and back, leaving each
// parametric layer with its input and output gradient.
func (n *Network[T]) forwardBackward(x []T, tg Target[T], num int, losses []T) error {
	n.chunk = -1
	if err := n.check(x, num); err != nil {
		return err
	}
	if len(losses) < num {
		return fmt.Errorf("nn: losses has length %d, need %d", len(losses), num)
	}
	if num == 0 {
		n.chunk = 0
		return nil
	}
	z := n.body.Forward(x, num, n.train)
	if err := n.loss.Eval(z, num, tg, losses, n.dz[:num*n.out.Size()]); err != nil {
		return fmt.Errorf("nn: %w", err)
	}
	n.body.Backward(n.dz[:num*n.out.Size()], num, false)
	n.chunk = num
	return nil
}

// PerSampleGrads writes sample i's gradient into grads[i*D:(i+1)*D] and its
// loss into losses[i], for i < num.
func (n *Network[T]) PerSampleGrads(x []T, tg Target[T], num int, grads []T, losses []T) error {
	d := len(n.params)
	if len(grads) < num*d {
		return fmt.Errorf("nn: grads has length %d, need %d", len(grads), num*d)
	}
	if err := n.forwardBackward(x, tg, num, losses); err != nil {
		return err
	}
	for k, l := range n.leaves {
		l.PerSampleGrads(num, grads[n.groups[k].Offset:], d)
	}
	return nil
}

// PerSampleNormsSq writes ‖g_{i,k}‖² into normsSq[i*K+k] (K groups) without
// materialising the gradients, and retains the chunk for AccumulateScaled.
func (n *Network[T]) PerSampleNormsSq(x []T, tg Target[T], num int, normsSq []float64, losses []T) error {
	k := len(n.groups)
	if len(normsSq) < num*k {
		return fmt.Errorf("nn: normsSq has length %d, need %d", len(normsSq), num*k)
	}
	if err := n.forwardBackward(x, tg, num, losses); err != nil {
		return err
	}
	for j, l := range n.leaves {
		l.PerSampleNormsSq(num, normsSq[j:], k)
	}
	return nil
}

// AccumulateScaled adds Σ_i scales[i*K+k]·g_{i,k} to sum for the retained
// chunk.
func (n *Network[T]) AccumulateScaled(scales []T, sum []T) error {
	if n.chunk < 0 {
		return ErrNoChunk
	}
	k := len(n.groups)
	if len(scales) < n.chunk*k || len(sum) != len(n.params) {
		return fmt.Errorf("nn: scales length %d (need %d), sum length %d (need %d)", len(scales), n.chunk*k, len(sum), len(n.params))
	}
	if n.chunk == 0 {
		return nil
	}
	for j, l := range n.leaves {
		g := n.groups[j]
		l.AccumulateScaled(n.chunk, scales[j:], k, sum[g.Offset:g.Offset+g.Len])
	}
	return nil
}

// BatchGrad adds the ordinary (non-private) gradient Σ_i g_i of the chunk to
// sum and writes the losses.
func (n *Network[T]) BatchGrad(x []T, tg Target[T], num int, sum []T, losses []T) error {
	if len(sum) != len(n.params) {
		return fmt.Errorf("nn: sum length %d, need %d", len(sum), len(n.params))
	}
	// Layers that can sum the batch's gradient during Backward, instead of
	// caching every sample's, do so for this call only.
	n.setBatchSum(true)
	err := n.forwardBackward(x, tg, num, losses)
	if err == nil {
		for j, l := range n.leaves {
			g := n.groups[j]
			l.AccumulateScaled(num, nil, 0, sum[g.Offset:g.Offset+g.Len])
		}
	}
	n.setBatchSum(false)
	n.chunk = -1 // the per-sample state was not kept: no DP call may follow
	return err
}

func (n *Network[T]) setBatchSum(on bool) {
	for _, l := range n.leaves {
		if c, ok := l.(batchSummer); ok {
			c.setBatchSum(on)
		}
	}
}

// batchSummer is a layer with a non-private mode in which Backward sums the
// batch's weight gradient directly (Conv2d), read by AccumulateScaled with
// nil scales.
type batchSummer interface{ setBatchSum(on bool) }

// Evaluate returns the summed loss and the number of correct predictions on
// num samples, with training-only behaviour off.
func (n *Network[T]) Evaluate(x []T, tg Target[T], num int) (float64, int, error) {
	n.chunk = -1
	if err := n.check(x, num); err != nil {
		return 0, 0, err
	}
	if num == 0 {
		return 0, 0, nil
	}
	z := n.body.Forward(x, num, false)
	if err := n.loss.Eval(z, num, tg, n.losses, nil); err != nil {
		return 0, 0, fmt.Errorf("nn: %w", err)
	}
	var s float64
	for _, v := range n.losses[:num] {
		s += float64(v)
	}
	return s, n.loss.Correct(z, num, tg), nil
}
