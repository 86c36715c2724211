package nn

// Tensor is one named parameter tensor of a layer: Shape in row-major
// (PyTorch's) layout; a layer's tensors tile its parameters in order.
type Tensor struct {
	Name  string
	Shape []int
}

// Tensorer is a parametric layer whose parameters split into named tensors
// (weight and bias). Exporters use it to give each tensor its shape; a
// layer without it is exported as one flat tensor.
type Tensorer interface {
	Tensors() []Tensor
}

// ParamTensor is a tensor's place in a Network's flat parameter vector.
type ParamTensor struct {
	Name   string
	Offset int
	Shape  []int
}

// Len is the number of parameters of t.
func (t ParamTensor) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Tensors lists every parameter tensor of the network in the order of
// Params, named GROUP.TENSOR (e.g. "0.linear.weight"). A layer that does
// not implement Tensorer, or whose tensors do not tile its parameters,
// gives one tensor named after its group, of shape [len].
func (n *Network[T]) Tensors() []ParamTensor {
	var out []ParamTensor
	for k, g := range n.groups {
		var ts []Tensor
		if tl, ok := n.leaves[k].(Tensorer); ok {
			ts = tl.Tensors()
		}
		total := 0
		for _, t := range ts {
			total += ParamTensor{Shape: t.Shape}.Len()
		}
		if len(ts) == 0 || total != g.Len {
			out = append(out, ParamTensor{Name: g.Name, Offset: g.Offset, Shape: []int{g.Len}})
			continue
		}
		off := g.Offset
		for _, t := range ts {
			pt := ParamTensor{Name: g.Name + "." + t.Name, Offset: off, Shape: append([]int(nil), t.Shape...)}
			out = append(out, pt)
			off += pt.Len()
		}
	}
	return out
}

// Tensors: W (Out×In) then b (Out).
func (l *Linear[T]) Tensors() []Tensor {
	ts := []Tensor{{"weight", []int{l.Out, l.In}}}
	if l.Bias {
		ts = append(ts, Tensor{"bias", []int{l.Out}})
	}
	return ts
}

// Tensors: W (Cout×Cin×K×K, the im2col row order c, kh, kw) then b (Cout).
// A weight-standardised convolution exports its raw weights, as PyTorch
// implementations of it store them.
func (l *Conv2d[T]) Tensors() []Tensor {
	ts := []Tensor{{"weight", []int{l.Cout, l.Cin, l.K, l.K}}}
	if l.Bias {
		ts = append(ts, Tensor{"bias", []int{l.Cout}})
	}
	return ts
}

// Tensors: γ then β, one per channel (PyTorch's weight and bias).
func (l *GroupNorm[T]) Tensors() []Tensor {
	if !l.Affine {
		return nil
	}
	return []Tensor{{"weight", []int{l.Channels}}, {"bias", []int{l.Channels}}}
}

// LinearFactors is one Linear layer's per-sample gradients in factored
// form after a forward and backward pass: sample i's weight gradient is
// DZ[i]·A[i]ᵀ (Out × In, at Offset in the flat parameters), its bias
// gradient DZ[i] (right after the weights, when Bias).
type LinearFactors[T Float] struct {
	A, DZ   []T // n × In inputs, n × Out output gradients
	In, Out int
	Bias    bool
	Offset  int
}

// Factors runs the forward and backward pass of the chunk and returns every
// parametric layer's factors, when every one is a Linear layer (an MLP or a
// linear model); ok is false, with nothing run, otherwise. The slices are
// views valid until the next call on the network.
func (n *Network[T]) Factors(x []T, tg Target[T], num int, losses []T) (fs []LinearFactors[T], ok bool, err error) {
	if !n.AllLinear() {
		return nil, false, nil
	}
	if err := n.forwardBackward(x, tg, num, losses); err != nil {
		return nil, true, err
	}
	for j, l := range n.leaves {
		lin := l.(*Linear[T])
		fs = append(fs, LinearFactors[T]{A: lin.x[:num*lin.In], DZ: lin.dz[:num*lin.Out], In: lin.In, Out: lin.Out,
			Bias: lin.Bias, Offset: n.groups[j].Offset})
	}
	return fs, true, nil
}

// AllLinear reports whether every parametric layer is Linear.
func (n *Network[T]) AllLinear() bool {
	for _, l := range n.leaves {
		if _, lin := l.(*Linear[T]); !lin {
			return false
		}
	}
	return len(n.leaves) > 0
}
