package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/rng"
)

// Net is a Gorgonia model compiled for a fixed batch size with one probe per
// parametric layer. It computes exact per-sample gradients of the loss in
// element type T. Chunks smaller than the batch are zero-padded and masked.
// A Net is not safe for concurrent use.
type Net[T Float] struct {
	b       *Builder
	h       *head
	vm      G.VM
	params  []T
	lossV   G.Value
	outV    G.Value
	n       int // examples in the chunk last run; -1 before any
	scratch []T
}

func dtypeOf[T Float]() tensor.Dtype {
	var z T
	if _, ok := any(z).(float32); ok {
		return tensor.Float32
	}
	return tensor.Float64
}

// NewNet builds spec for chunks of up to batch examples, with parameters
// initialised from seed (PyTorch's default schemes, see the layer helpers).
func NewNet[T Float](spec Spec, batch int, seed uint64) (*Net[T], error) {
	if batch <= 0 {
		return nil, fmt.Errorf("graph: batch size %d must be positive", batch)
	}
	b := newBuilder(dtypeOf[T](), batch, true)
	h, err := buildHead(b, spec)
	if err != nil {
		return nil, err
	}
	probes := make(G.Nodes, len(b.layers))
	for i, l := range b.layers {
		probes[i] = l.probe
	}
	dz, err := G.Grad(h.total, probes...)
	if err != nil {
		return nil, fmt.Errorf("graph: differentiating with respect to the probes: %w", err)
	}
	need := 0
	for i, l := range b.layers {
		l.dzVal = tensor.New(tensor.WithShape(l.probe.Shape()...), tensor.Of(b.dt))
		G.Read(dz[i], &l.dzVal)
		if l.kind == denseLayer {
			need = max(need, batch*l.rows*l.outDim, l.outDim*l.inDim)
		}
	}
	n := &Net[T]{b: b, h: h, params: make([]T, b.nparam), n: -1, scratch: make([]T, need)}
	n.lossV = tensor.New(tensor.WithShape(batch), tensor.Of(b.dt))
	G.Read(h.perEx, &n.lossV)
	n.outV = tensor.New(tensor.WithShape(h.out.Shape()...), tensor.Of(b.dt))
	G.Read(h.out, &n.outV)
	n.vm = G.NewTapeMachine(b.g)
	n.Init(seed)
	return n, nil
}

// Init redraws the parameters from seed: U(±bound) for weights and biases,
// γ = 1 and β = 0 for normalisation layers. Each tensor has its own child
// stream, named after it.
func (n *Net[T]) Init(seed uint64) {
	root := rng.New(seed)
	for _, p := range n.b.params {
		dst := n.params[p.offset : p.offset+p.size]
		switch p.init {
		case initOnes:
			for i := range dst {
				dst[i] = 1
			}
		case initZeros:
			clear(dst)
		case initUniform:
			s := root.Child(p.name)
			for i := range dst {
				dst[i] = T((2*s.Float64() - 1) * p.bound)
			}
		}
	}
}

// Params is the live flat parameter vector.
func (n *Net[T]) Params() []T { return n.params }

// NumParams is len(Params()).
func (n *Net[T]) NumParams() int { return len(n.params) }

// Groups lists one group per parametric layer, in declaration order.
func (n *Net[T]) Groups() []models.Group { return n.b.groups }

// InputSize is the number of values per example.
func (n *Net[T]) InputSize() int { return n.h.inSize }

// MaxBatch is the graph's batch size.
func (n *Net[T]) MaxBatch() int { return n.b.batch }

// Classes is the number of classes for softmax cross-entropy, else 0.
func (n *Net[T]) Classes() int { return n.h.classes }

// Close releases the Gorgonia machine.
func (n *Net[T]) Close() error { return n.vm.Close() }

// copyIn writes the flat parameters into the graph's tensors.
func copyIn[T Float](ps []*param, flat []T) {
	for _, p := range ps {
		dst := p.val.Data().([]T)
		src := flat[p.offset : p.offset+p.size]
		if p.rows == 0 {
			copy(dst, src)
			continue
		}
		// flat is rows×cols, the node cols×rows.
		for r := 0; r < p.rows; r++ {
			row := src[r*p.cols : (r+1)*p.cols]
			for c, v := range row {
				dst[c*p.rows+r] = v
			}
		}
	}
}

// run executes forward and backward on a chunk and retains its factors.
func (n *Net[T]) run(x []T, y []int, t []T, cnt int) error {
	n.n = -1
	if err := feed(n.h, x, y, t, cnt); err != nil {
		return err
	}
	copyIn(n.b.params, n.params)
	for _, l := range n.b.layers {
		clear(l.probeVal.Data().([]T))
	}
	defer n.vm.Reset()
	if err := n.vm.RunAll(); err != nil {
		return fmt.Errorf("graph: running the graph: %w", err)
	}
	n.n = cnt
	return nil
}

func (n *Net[T]) copyLosses(losses []T) error {
	if len(losses) < n.n {
		return fmt.Errorf("graph: losses has length %d, need %d", len(losses), n.n)
	}
	copy(losses, n.lossV.Data().([]T)[:n.n])
	return nil
}

func data[T Float](v G.Value) []T { return v.(tensor.Tensor).Data().([]T) }

// PerSampleGrads writes example i's gradient into grads[i*D:(i+1)*D] and its
// loss into losses[i], for the cnt examples of x (and labels y or targets t).
func (n *Net[T]) PerSampleGrads(x []T, y []int, t []T, cnt int, grads, losses []T) error {
	d := len(n.params)
	if len(grads) < cnt*d {
		return fmt.Errorf("graph: grads has length %d, need %d×%d", len(grads), cnt, d)
	}
	if err := n.run(x, y, t, cnt); err != nil {
		return err
	}
	defer func() { n.n = -1 }() // only PerSampleNormsSq retains a chunk
	for _, l := range n.b.layers {
		a, dz := data[T](l.inVal), data[T](l.dzVal)
		for i := 0; i < cnt; i++ {
			g := grads[i*d : (i+1)*d]
			switch l.kind {
			case denseLayer:
				n.denseGrad(l, a, dz, i, g[l.w.offset:l.w.offset+l.w.size], g)
			case normLayer:
				normGrad(l, a, dz, i, g[l.w.offset:l.w.offset+l.w.size], g[l.b.offset:l.b.offset+l.b.size])
			}
		}
	}
	return n.copyLosses(losses)
}

// denseGrad writes example i's weight gradient DZ_iᵀ A_i into gw and its bias
// gradient Σ_rows DZ_i into g at the bias offset.
func (n *Net[T]) denseGrad(l *layer, a, dz []T, i int, gw, g []T) {
	ai := a[i*l.rows*l.inDim : (i+1)*l.rows*l.inDim]
	dzi := dz[i*l.rows*l.outDim : (i+1)*l.rows*l.outDim]
	gemm(true, false, l.outDim, l.inDim, l.rows, 1, dzi, l.outDim, ai, l.inDim, 0, gw, l.inDim)
	if l.b != nil {
		gb := g[l.b.offset : l.b.offset+l.b.size]
		clear(gb)
		for r := 0; r < l.rows; r++ {
			for o, v := range dzi[r*l.outDim : (r+1)*l.outDim] {
				gb[o] += v
			}
		}
	}
}

// normGrad writes example i's dγ = Σ_hw dz ⊙ x̂ and dβ = Σ_hw dz.
func normGrad[T Float](l *layer, xh, dz []T, i int, gg, gb []T) {
	per := l.inDim * l.rows
	xi, di := xh[i*per:(i+1)*per], dz[i*per:(i+1)*per]
	for c := 0; c < l.inDim; c++ {
		var sg, sb T
		for j := c * l.rows; j < (c+1)*l.rows; j++ {
			sg += di[j] * xi[j]
			sb += di[j]
		}
		gg[c], gb[c] = sg, sb
	}
}

// PerSampleNormsSq writes ‖g_{i,k}‖² into normsSq[i*K+k] (K groups) without
// materialising the gradients, and the losses; the chunk is retained for
// AccumulateScaled. Linear layers use ‖a_i‖²‖dz_i‖²; Conv2d layers form each
// example's small outC×K gradient in a scratch buffer.
func (n *Net[T]) PerSampleNormsSq(x []T, y []int, t []T, cnt int, normsSq []float64, losses []T) error {
	k := len(n.b.groups)
	if len(normsSq) < cnt*k {
		return fmt.Errorf("graph: normsSq has length %d, need %d×%d", len(normsSq), cnt, k)
	}
	if err := n.run(x, y, t, cnt); err != nil {
		return err
	}
	clear(normsSq[:cnt*k])
	for _, l := range n.b.layers {
		a, dz := data[T](l.inVal), data[T](l.dzVal)
		for i := 0; i < cnt; i++ {
			normsSq[i*k+l.group] = n.layerNormSq(l, a, dz, i)
		}
	}
	return n.copyLosses(losses)
}

func (n *Net[T]) layerNormSq(l *layer, a, dz []T, i int) float64 {
	switch l.kind {
	case normLayer:
		var s float64
		per := l.inDim * l.rows
		xi, di := a[i*per:(i+1)*per], dz[i*per:(i+1)*per]
		for c := 0; c < l.inDim; c++ {
			var sg, sb float64
			for j := c * l.rows; j < (c+1)*l.rows; j++ {
				sg += float64(di[j]) * float64(xi[j])
				sb += float64(di[j])
			}
			s += sg*sg + sb*sb
		}
		return s
	default:
		dzi := dz[i*l.rows*l.outDim : (i+1)*l.rows*l.outDim]
		var s float64
		if l.rows == 1 {
			s = sumSq(a[i*l.inDim:(i+1)*l.inDim]) * sumSq(dzi)
		} else {
			gw := n.scratch[:l.outDim*l.inDim]
			ai := a[i*l.rows*l.inDim : (i+1)*l.rows*l.inDim]
			gemm(true, false, l.outDim, l.inDim, l.rows, 1, dzi, l.outDim, ai, l.inDim, 0, gw, l.inDim)
			s = sumSq(gw)
		}
		if l.b != nil {
			for o := 0; o < l.outDim; o++ {
				var sb float64
				for r := 0; r < l.rows; r++ {
					sb += float64(dzi[r*l.outDim+o])
				}
				s += sb * sb
			}
		}
		return s
	}
}

// AccumulateScaled adds Σ_i scales[i*K+k]·g_{i,k} to sum for the chunk last
// passed to PerSampleNormsSq: one matrix product (DZ scaled per row)ᵀ·A per
// dense layer.
func (n *Net[T]) AccumulateScaled(scales []T, sum []T) error {
	if n.n < 0 {
		return fmt.Errorf("graph: AccumulateScaled before PerSampleNormsSq")
	}
	k, cnt := len(n.b.groups), n.n
	if len(scales) < cnt*k || len(sum) != len(n.params) {
		return fmt.Errorf("graph: scales length %d (need %d), sum length %d (need %d)", len(scales), cnt*k, len(sum), len(n.params))
	}
	for _, l := range n.b.layers {
		a, dz := data[T](l.inVal), data[T](l.dzVal)
		switch l.kind {
		case denseLayer:
			blk := l.rows * l.outDim
			sdz := n.scratch[:cnt*blk]
			for i := 0; i < cnt; i++ {
				s := scales[i*k+l.group]
				src, dst := dz[i*blk:(i+1)*blk], sdz[i*blk:(i+1)*blk]
				for j, v := range src {
					dst[j] = s * v
				}
			}
			sw := sum[l.w.offset : l.w.offset+l.w.size]
			if !anyZero(scales, cnt, k, l.group) {
				gemm(true, false, l.outDim, l.inDim, cnt*l.rows, 1, sdz, l.outDim, a, l.inDim, 1, sw, l.inDim)
			} else {
				// A dropped example (scale 0) may hold ±Inf or NaN and
				// 0·Inf = NaN: only the kept examples' rows enter.
				for i := 0; i < cnt; i++ {
					if scales[i*k+l.group] != 0 {
						gemm(true, false, l.outDim, l.inDim, l.rows, 1, sdz[i*blk:], l.outDim, a[i*l.rows*l.inDim:], l.inDim, 1, sw, l.inDim)
					}
				}
			}
			if l.b != nil {
				sb := sum[l.b.offset : l.b.offset+l.b.size]
				for r := 0; r < cnt*l.rows; r++ {
					if scales[(r/l.rows)*k+l.group] == 0 {
						continue
					}
					for o, v := range sdz[r*l.outDim : (r+1)*l.outDim] {
						sb[o] += v
					}
				}
			}
		case normLayer:
			per := l.inDim * l.rows
			sg, sb := sum[l.w.offset:l.w.offset+l.w.size], sum[l.b.offset:l.b.offset+l.b.size]
			for i := 0; i < cnt; i++ {
				s := scales[i*k+l.group]
				if s == 0 {
					continue // dropped: contributes nothing
				}
				xi, di := a[i*per:(i+1)*per], dz[i*per:(i+1)*per]
				for c := 0; c < l.inDim; c++ {
					var g, bb T
					for j := c * l.rows; j < (c+1)*l.rows; j++ {
						g += di[j] * xi[j]
						bb += di[j]
					}
					sg[c] += s * g
					sb[c] += s * bb
				}
			}
		}
	}
	return nil
}

// anyZero reports whether some example of the chunk has scale 0 in group g.
func anyZero[T Float](scales []T, cnt, k, g int) bool {
	for i := 0; i < cnt; i++ {
		if scales[i*k+g] == 0 {
			return true
		}
	}
	return false
}

// Evaluate returns the summed loss and the number of correct predictions on
// cnt examples. It runs the whole graph (the backward pass included).
func (n *Net[T]) Evaluate(x []T, y []int, t []T, cnt int) (float64, int, error) {
	if err := n.run(x, y, t, cnt); err != nil {
		return 0, 0, err
	}
	defer func() { n.n = -1 }()
	var s float64
	for _, v := range data[T](n.lossV)[:cnt] {
		s += float64(v)
	}
	return s, correct(n.h, data[T](n.outV), y, cnt), nil
}
