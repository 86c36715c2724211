package graph

import (
	"errors"
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/dptrain/dptrain/models"
)

// Loss selects the per-example loss applied to the network's output.
type Loss int

const (
	// SoftmaxCrossEntropy: the output is B×C logits, Batch.Y holds class
	// indices; ℓ = logsumexp(z) − z_y, computed max-subtracted.
	SoftmaxCrossEntropy Loss = iota
	// Logistic: one logit per example, Batch.Y ∈ {0, 1};
	// ℓ = log(1 + exp(−z)) for y = 1 and log(1 + exp(z)) for y = 0.
	Logistic
	// Squared: one output per example, Batch.T holds the target; ℓ = ½(z − t)².
	Squared
)

func (l Loss) String() string {
	switch l {
	case SoftmaxCrossEntropy:
		return "softmax-cross-entropy"
	case Logistic:
		return "logistic"
	case Squared:
		return "squared"
	}
	return fmt.Sprintf("Loss(%d)", int(l))
}

// Spec describes a model: the per-example input shape (e.g. {784} or
// {1, 28, 28}), the loss, and Build, which wires the network from the batched
// input node x (shape B×Input...) to the output node using b's helpers. Build
// may also use any Gorgonia op directly, but parameters must be declared
// through b (Linear, Conv2d, GroupNorm) so their per-sample gradients are
// known.
type Spec struct {
	Input []int
	Loss  Loss
	Build func(b *Builder, x *G.Node) *G.Node
}

func (s Spec) inputSize() int {
	n := 1
	for _, d := range s.Input {
		n *= d
	}
	return n
}

func (s Spec) validate() error {
	if len(s.Input) == 0 {
		return errors.New("graph: spec has no input shape")
	}
	for _, d := range s.Input {
		if d <= 0 {
			return fmt.Errorf("graph: input shape %v has a non-positive dimension", s.Input)
		}
	}
	if s.Build == nil {
		return errors.New("graph: spec has no Build function")
	}
	if s.Loss < SoftmaxCrossEntropy || s.Loss > Squared {
		return fmt.Errorf("graph: unknown loss %v", s.Loss)
	}
	return nil
}

type initKind int

const (
	initUniform initKind = iota // U(−bound, bound), PyTorch's default for Linear/Conv2d
	initOnes
	initZeros
)

// param is one parameter tensor: a slice of the flat vector and the Gorgonia
// node holding it. When rows > 0 the flat vector holds a rows×cols matrix and
// the node holds its transpose (cols×rows), so the graph can multiply without
// a transpose op while the flat layout stays PyTorch's.
type param struct {
	name         string
	node         *G.Node
	val          *tensor.Dense
	offset, size int
	rows, cols   int
	init         initKind
	bound        float64
}

type layerKind int

const (
	denseLayer layerKind = iota // Linear and Conv2d: g_W,i = DZ_iᵀ A_i, g_b,i = Σ_rows DZ_i
	normLayer                   // GroupNorm affine: dγ_i = Σ_hw dz ⊙ x̂, dβ_i = Σ_hw dz
)

// layer is one parametric layer with its probe. For a dense layer the
// per-example factors are A_i (rows×inDim, the input or its im2col) and
// DZ_i (rows×outDim); rows is 1 for Linear and oH·oW for Conv2d. For a norm
// layer x̂ and dz are C×rows, inDim = outDim = C.
type layer struct {
	kind         layerKind
	name         string
	group        int
	w, b         *param // weight (γ) and optional bias (β)
	probe        *G.Node
	probeVal     *tensor.Dense
	in           *G.Node // node whose value is the per-example factor A (or x̂)
	inVal, dzVal G.Value
	rows         int
	inDim        int
	outDim       int
}

// Builder declares parameters and wires layers while a Spec's Build runs.
// Errors are sticky: after the first one every helper returns nil, and the
// error is reported when the model is built.
type Builder struct {
	g      *G.ExprGraph
	dt     tensor.Dtype
	batch  int
	probes bool
	params []*param
	groups []models.Group
	layers []*layer
	names  map[string]bool
	nparam int
	err    error
}

func newBuilder(dt tensor.Dtype, batch int, probes bool) *Builder {
	return &Builder{g: G.NewGraph(), dt: dt, batch: batch, probes: probes, names: map[string]bool{}}
}

// Graph returns the expression graph being built, for custom ops.
func (b *Builder) Graph() *G.ExprGraph { return b.g }

// Batch is the (fixed) batch dimension of every node in the graph.
func (b *Builder) Batch() int { return b.batch }

// Err returns the first error met while building.
func (b *Builder) Err() error { return b.err }

// Fail records err (if it is the first) and returns nil, so custom code can
// write `if err != nil { return b.Fail(err) }`.
func (b *Builder) Fail(err error) *G.Node {
	if b.err == nil && err != nil {
		b.err = err
	}
	return nil
}

// ok reports whether building can go on with the given inputs.
func (b *Builder) ok(xs ...*G.Node) bool {
	if b.err != nil {
		return false
	}
	for _, x := range xs {
		if x == nil {
			b.err = errors.New("graph: nil node passed to a builder helper")
			return false
		}
	}
	return true
}

// check returns a function that passes a Gorgonia constructor's node
// through, or records its error, labelled with what.
func (b *Builder) check(what string) func(*G.Node, error) *G.Node {
	return func(n *G.Node, err error) *G.Node {
		if err != nil {
			return b.Fail(fmt.Errorf("graph: %s: %w", what, err))
		}
		return n
	}
}

func (b *Builder) newParam(name string, shape tensor.Shape, rows, cols int, init initKind, bound float64) *param {
	val := tensor.New(tensor.WithShape(shape...), tensor.Of(b.dt))
	node := G.NewTensor(b.g, b.dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(val))
	p := &param{name: name, node: node, val: val, offset: b.nparam, size: shape.TotalSize(),
		rows: rows, cols: cols, init: init, bound: bound}
	b.nparam += p.size
	b.params = append(b.params, p)
	return p
}

func (b *Builder) newGroup(name string) (int, bool) {
	if name == "" || b.names[name] {
		b.Fail(fmt.Errorf("graph: layer name %q is empty or used twice", name))
		return 0, false
	}
	b.names[name] = true
	b.groups = append(b.groups, models.Group{Name: name, Offset: b.nparam})
	return len(b.groups) - 1, true
}

func (b *Builder) closeGroup(k int) {
	b.groups[k].Len = b.nparam - b.groups[k].Offset
}

// addProbe adds a zero probe of z's shape to z (when probes are on) and
// records the layer.
func (b *Builder) addProbe(l *layer, z *G.Node) *G.Node {
	b.layers = append(b.layers, l)
	if !b.probes {
		return z
	}
	shape := z.Shape()
	l.probeVal = tensor.New(tensor.WithShape(shape...), tensor.Of(b.dt))
	l.probe = G.NewTensor(b.g, b.dt, len(shape), G.WithShape(shape...), G.WithName(l.name+".probe"), G.WithValue(l.probeVal))
	l.inVal = tensor.New(tensor.WithShape(l.in.Shape()...), tensor.Of(b.dt))
	G.Read(l.in, &l.inVal)
	return b.check("probe add for " + l.name)(G.Add(z, l.probe))
}

// Linear is the fully connected layer z = x·Wᵀ + b on x of shape B×in; W is
// out×in in the flat vector (PyTorch layout), followed by b when bias is set.
// Initialisation is PyTorch's default, U(±1/√in) for W and b.
func (b *Builder) Linear(name string, x *G.Node, out int, bias bool) *G.Node {
	if !b.ok(x) {
		return nil
	}
	s := x.Shape()
	if len(s) != 2 || s[0] != b.batch {
		return b.Fail(fmt.Errorf("graph: Linear %q wants a %d×in input, got shape %v (Flatten first)", name, b.batch, s))
	}
	if out <= 0 {
		return b.Fail(fmt.Errorf("graph: Linear %q: output width %d", name, out))
	}
	in := s[1]
	k, ok := b.newGroup(name)
	if !ok {
		return nil
	}
	bound := 1 / math.Sqrt(float64(in))
	l := &layer{kind: denseLayer, name: name, group: k, in: x, rows: 1, inDim: in, outDim: out}
	l.w = b.newParam(name+".weight", tensor.Shape{in, out}, out, in, initUniform, bound)
	z := b.check("Linear " + name)(G.Mul(x, l.w.node))
	if bias && z != nil {
		l.b = b.newParam(name+".bias", tensor.Shape{out}, 0, 0, initUniform, bound)
		z = b.check("Linear bias " + name)(G.BroadcastAdd(z, l.b.node, nil, []byte{0}))
	}
	b.closeGroup(k)
	if z == nil {
		return nil
	}
	return b.addProbe(l, z)
}

// Conv2d is a 2-D convolution of x (B×C×H×W) with outC filters of size k×k,
// the given stride and symmetric zero padding, and an optional bias; the
// output is B×outC×oH×oW. The weight is outC×C×k×k in the flat vector.
// It runs as im2col followed by one matrix product, and the im2col matrix is
// what the per-sample rule reads. Initialisation: U(±1/√(C·k·k)).
func (b *Builder) Conv2d(name string, x *G.Node, outC, k, stride, pad int, bias bool) *G.Node {
	if !b.ok(x) {
		return nil
	}
	s := x.Shape()
	if len(s) != 4 || s[0] != b.batch {
		return b.Fail(fmt.Errorf("graph: Conv2d %q wants a %d×C×H×W input, got shape %v", name, b.batch, s))
	}
	if outC <= 0 || k <= 0 || stride <= 0 || pad < 0 {
		return b.Fail(fmt.Errorf("graph: Conv2d %q: bad outC=%d k=%d stride=%d pad=%d", name, outC, k, stride, pad))
	}
	c, h, w := s[1], s[2], s[3]
	oh, ow := (h+2*pad-k)/stride+1, (w+2*pad-k)/stride+1
	if h+2*pad < k || w+2*pad < k {
		return b.Fail(fmt.Errorf("graph: Conv2d %q: kernel %d larger than padded input %d×%d", name, k, h+2*pad, w+2*pad))
	}
	kk := c * k * k
	grp, ok := b.newGroup(name)
	if !ok {
		return nil
	}
	col := b.check("Conv2d im2col " + name)(G.Im2Col(x, tensor.Shape{k, k}, tensor.Shape{pad, pad}, tensor.Shape{stride, stride}, tensor.Shape{1, 1}))
	if col == nil {
		return nil
	}
	l := &layer{kind: denseLayer, name: name, group: grp, in: col, rows: oh * ow, inDim: kk, outDim: outC}
	bound := 1 / math.Sqrt(float64(kk))
	l.w = b.newParam(name+".weight", tensor.Shape{kk, outC}, outC, kk, initUniform, bound)
	// A sharing reshape is safe here: only a matrix product reads it.
	patches := b.check("Conv2d reshape " + name)(G.Reshape(col, tensor.Shape{b.batch * oh * ow, kk}))
	if patches == nil {
		return nil
	}
	z := b.check("Conv2d " + name)(G.Mul(patches, l.w.node))
	if bias && z != nil {
		// Added on the 2-D (B·oH·oW)×outC product: Gorgonia's gradient of a
		// broadcast over three axes is wrong (verified: a (1,3,3,3) case).
		l.b = b.newParam(name+".bias", tensor.Shape{outC}, 0, 0, initUniform, bound)
		z = b.check("Conv2d bias " + name)(G.BroadcastAdd(z, l.b.node, nil, []byte{0}))
	}
	b.closeGroup(grp)
	if z == nil {
		return nil
	}
	z = b.reshape(z, tensor.Shape{b.batch, oh, ow, outC}, "Conv2d reshape "+name)
	if z == nil {
		return nil
	}
	z = b.addProbe(l, z) // B×oH×oW×outC: DZ_i is (oH·oW)×outC, row-major
	if z == nil {
		return nil
	}
	return b.check("Conv2d transpose " + name)(G.Transpose(z, 0, 3, 1, 2))
}

// GroupNorm normalises x (B×C×H×W, or B×C) over each of `groups` channel
// groups per example, then applies a per-channel affine γ (init 1) and β
// (init 0); LayerNorm is groups = 1. It is built from primitives, not
// Gorgonia's GroupNorm op. Flat layout: γ (C) then β (C).
func (b *Builder) GroupNorm(name string, x *G.Node, groups int, eps float64) *G.Node {
	if !b.ok(x) {
		return nil
	}
	s := x.Shape()
	if (len(s) != 4 && len(s) != 2) || s[0] != b.batch {
		return b.Fail(fmt.Errorf("graph: GroupNorm %q wants a %d×C×H×W or %d×C input, got shape %v", name, b.batch, b.batch, s))
	}
	c := s[1]
	hw := s.TotalSize() / (b.batch * c)
	if groups <= 0 || c%groups != 0 {
		return b.Fail(fmt.Errorf("graph: GroupNorm %q: %d channels do not split into %d groups", name, c, groups))
	}
	if !(eps > 0) {
		return b.Fail(fmt.Errorf("graph: GroupNorm %q: eps %v must be positive", name, eps))
	}
	grp, ok := b.newGroup(name)
	if !ok {
		return nil
	}
	per := c / groups * hw
	xr := b.reshape(x, tensor.Shape{b.batch, groups, per}, "GroupNorm reshape "+name)
	if xr == nil {
		return nil
	}
	inv := b.scalar(1 / float64(per))
	mean := b.check("GroupNorm mean " + name)(G.Sum(xr, 2))
	mean = b.mul(mean, inv)
	xc := b.bc(G.BroadcastSub, xr, mean, []byte{2}, "GroupNorm center "+name)
	sq := b.unary(G.Square, xc, "GroupNorm square "+name)
	if sq == nil {
		return nil
	}
	v := b.mul(b.check("GroupNorm var "+name)(G.Sum(sq, 2)), inv)
	if v == nil {
		return nil
	}
	sd := b.unary(G.Sqrt, b.check("GroupNorm eps "+name)(G.Add(v, b.scalar(eps))), "GroupNorm sqrt "+name)
	xh := b.bc(G.BroadcastHadamardDiv, xc, sd, []byte{2}, "GroupNorm scale "+name)
	if xh == nil {
		return nil
	}
	xh = b.reshape(xh, tensor.Shape{b.batch, c, hw}, "GroupNorm reshape "+name)
	if xh == nil {
		return nil
	}
	l := &layer{kind: normLayer, name: name, group: grp, in: xh, rows: hw, inDim: c, outDim: c}
	l.w = b.newParam(name+".weight", tensor.Shape{c}, 0, 0, initOnes, 0)
	l.b = b.newParam(name+".bias", tensor.Shape{c}, 0, 0, initZeros, 0)
	b.closeGroup(grp)
	y := b.bc(G.BroadcastHadamardProd, xh, l.w.node, []byte{0, 2}, "GroupNorm gamma "+name)
	y = b.bc(G.BroadcastAdd, y, l.b.node, []byte{0, 2}, "GroupNorm beta "+name)
	if y == nil {
		return nil
	}
	y = b.addProbe(l, y)
	if y == nil {
		return nil
	}
	return b.reshape(y, s, "GroupNorm reshape "+name)
}

// LayerNorm is GroupNorm with one group.
func (b *Builder) LayerNorm(name string, x *G.Node, eps float64) *G.Node {
	return b.GroupNorm(name, x, 1, eps)
}

// ReLU is max(x, 0) elementwise.
func (b *Builder) ReLU(x *G.Node) *G.Node {
	if !b.ok(x) {
		return nil
	}
	return b.check("ReLU")(G.Rectify(x))
}

// Tanh is tanh elementwise.
func (b *Builder) Tanh(x *G.Node) *G.Node { return b.unary(G.Tanh, x, "Tanh") }

// Add is the residual sum a + b of two nodes of the same shape.
func (b *Builder) Add(x, y *G.Node) *G.Node {
	if !b.ok(x, y) {
		return nil
	}
	return b.check("Add")(G.Add(x, y))
}

// Flatten reshapes x (B×...) to B×rest.
func (b *Builder) Flatten(x *G.Node) *G.Node {
	if !b.ok(x) {
		return nil
	}
	s := x.Shape()
	return b.reshape(x, tensor.Shape{s[0], s.TotalSize() / s[0]}, "Flatten")
}

// MaxPool2d is max pooling of x (B×C×H×W) with a k×k window, the given
// stride and no padding.
func (b *Builder) MaxPool2d(x *G.Node, k, stride int) *G.Node {
	if !b.ok(x) {
		return nil
	}
	if x.Dims() != 4 || k <= 0 || stride <= 0 {
		return b.Fail(fmt.Errorf("graph: MaxPool2d: input %v, k=%d, stride=%d", x.Shape(), k, stride))
	}
	return b.check("MaxPool2d")(G.MaxPool2D(x, tensor.Shape{k, k}, []int{0, 0}, []int{stride, stride}))
}

// AvgPool2d is average pooling of x (B×C×H×W) with a k×k window, the given
// stride and zero padding (counted in the average, as PyTorch's default).
// Built from Im2Col and Sum because Gorgonia's AveragePool2D is broken.
func (b *Builder) AvgPool2d(x *G.Node, k, stride, pad int) *G.Node {
	if !b.ok(x) {
		return nil
	}
	s := x.Shape()
	if len(s) != 4 || k <= 0 || stride <= 0 || pad < 0 || s[2]+2*pad < k || s[3]+2*pad < k {
		return b.Fail(fmt.Errorf("graph: AvgPool2d: input %v, k=%d, stride=%d, pad=%d", s, k, stride, pad))
	}
	oh, ow := (s[2]+2*pad-k)/stride+1, (s[3]+2*pad-k)/stride+1
	xr := b.reshape(x, tensor.Shape{s[0] * s[1], 1, s[2], s[3]}, "AvgPool2d reshape")
	if xr == nil {
		return nil
	}
	col := b.check("AvgPool2d im2col")(G.Im2Col(xr, tensor.Shape{k, k}, tensor.Shape{pad, pad}, tensor.Shape{stride, stride}, tensor.Shape{1, 1}))
	if col == nil {
		return nil
	}
	sum := b.mul(b.check("AvgPool2d sum")(G.Sum(col, 3)), b.scalar(1/float64(k*k)))
	if sum == nil {
		return nil
	}
	return b.reshape(sum, tensor.Shape{s[0], s[1], oh, ow}, "AvgPool2d reshape")
}

// GlobalAvgPool averages x (B×C×H×W) over H and W, giving B×C.
func (b *Builder) GlobalAvgPool(x *G.Node) *G.Node {
	if !b.ok(x) {
		return nil
	}
	s := x.Shape()
	if len(s) != 4 {
		return b.Fail(fmt.Errorf("graph: GlobalAvgPool wants B×C×H×W, got %v", s))
	}
	xr := b.reshape(x, tensor.Shape{s[0], s[1], s[2] * s[3]}, "GlobalAvgPool reshape")
	if xr == nil {
		return nil
	}
	return b.mul(b.check("GlobalAvgPool sum")(G.Sum(xr, 2)), b.scalar(1/float64(s[2]*s[3])))
}

func (b *Builder) scalar(v float64) *G.Node {
	if b.dt == tensor.Float32 {
		return G.NewConstant(float32(v))
	}
	return G.NewConstant(v)
}

func (b *Builder) mul(x, s *G.Node) *G.Node {
	if !b.ok(x) {
		return nil
	}
	return b.check("scale")(G.Mul(x, s))
}

func (b *Builder) unary(f func(*G.Node) (*G.Node, error), x *G.Node, what string) *G.Node {
	if !b.ok(x) {
		return nil
	}
	return b.check(what)(f(x))
}

func (b *Builder) bc(f func(a, c *G.Node, l, r []byte) (*G.Node, error), x, y *G.Node, right []byte, what string) *G.Node {
	if !b.ok(x, y) {
		return nil
	}
	return b.check(what)(f(x, y, nil, right))
}
