package graph_test

import (
	"fmt"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/models/graph"
	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/rng"
)

// The tests in this file check the native engine (models/nn) in float64
// against the Gorgonia oracle: per-sample gradients, losses and per-group
// norms, to 1e-9 relative per example.

// wire adds the Gorgonia equivalent of an nn layer (tree) to the graph.
// Parametric layers are named p1, p2, ... in the engine's depth-first order,
// so the flat layouts coincide.
func wire(b *graph.Builder, x *G.Node, l nn.Layer[float64], k *int) *G.Node {
	if x == nil {
		return nil
	}
	name := func() string { *k++; return fmt.Sprintf("p%d", *k) }
	switch l := l.(type) {
	case *nn.Linear[float64]:
		if x.Dims() != 2 {
			x = b.Flatten(x)
		}
		return b.Linear(name(), x, l.Out, l.Bias)
	case *nn.Conv2d[float64]:
		return b.Conv2d(name(), x, l.Cout, l.K, l.Stride, l.Pad, l.Bias)
	case *nn.GroupNorm[float64]:
		if !l.Affine {
			return b.Fail(fmt.Errorf("wire: GroupNorm without affine has no graph equivalent here"))
		}
		return b.GroupNorm(name(), x, l.Groups, l.Eps)
	case *nn.ReLU[float64]:
		return b.ReLU(x)
	case *nn.Tanh[float64]:
		return b.Tanh(x)
	case *nn.MaxPool2d[float64]:
		return b.MaxPool2d(x, l.K, l.Stride)
	case *nn.AvgPool2d[float64]:
		return b.AvgPool2d(x, l.K, l.Stride, 0)
	case *nn.GlobalAvgPool[float64]:
		return b.GlobalAvgPool(x)
	case *nn.Flatten[float64]:
		return b.Flatten(x)
	case *nn.Dropout[float64]:
		// Gorgonia's dropout is broken
		// (docs/architecture.md#gorgonia-pitfalls): multiply by a mask node
		// whose value the test sets per example to the engine's mask.
		m := tensor.New(tensor.WithShape(x.Shape()...), tensor.Of(tensor.Float64))
		dropoutMasks[l] = m
		node := G.NewTensor(b.Graph(), tensor.Float64, x.Dims(), G.WithShape(x.Shape()...),
			G.WithName(fmt.Sprintf("dropout-mask-%p", l)), G.WithValue(m))
		y, err := G.HadamardProd(x, node)
		if err != nil {
			return b.Fail(fmt.Errorf("wire: dropout: %w", err))
		}
		return y
	case *nn.Sequential[float64]:
		for _, c := range l.Children() {
			x = wire(b, x, c, k)
		}
		return x
	case *nn.Residual[float64]:
		body := wire(b, x, l.Body, k)
		sc := x
		if l.Shortcut != nil {
			sc = wire(b, x, l.Shortcut, k)
		}
		return b.Add(body, sc)
	}
	return b.Fail(fmt.Errorf("wire: no graph equivalent for nn layer %T", l))
}

// dropoutMasks holds, for each engine Dropout wired into an oracle graph
// (batch of one), the value of its mask node.
var dropoutMasks = map[*nn.Dropout[float64]]*tensor.Dense{}

func inputOf(s nn.Shape) []int {
	if s.H == 1 && s.W == 1 {
		return []int{s.C}
	}
	return []int{s.C, s.H, s.W}
}

// specOf is the graph Spec of an nn layer list.
func specOf(in nn.Shape, loss graph.Loss, layers ...nn.Layer[float64]) graph.Spec {
	return graph.Spec{Input: inputOf(in), Loss: loss, Build: func(b *graph.Builder, x *G.Node) *G.Node {
		k := 0
		for _, l := range layers {
			x = wire(b, x, l, &k)
		}
		return x
	}}
}

// crossCheck compares net's per-sample gradients, losses and norms with the
// oracle's for spec on n random examples, parameters perturbed so that every
// one matters (GroupNorm's γ ≠ 1, β ≠ 0; zero-initialised models non-zero).
// It returns the worst relative gradient error.
func crossCheck(t *testing.T, net *nn.Network[float64], spec graph.Spec, n int, seed uint64) float64 {
	t.Helper()
	s := rng.New(seed)
	net.Init(s.Child("init"))
	p := net.Params()
	for i := range p {
		p[i] += 0.1 * s.NormFloat64()
	}
	or, err := graph.NewOracle(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer or.Close()
	d := net.NumParams()
	if or.NumParams() != d {
		t.Fatalf("oracle has %d parameters, engine %d", or.NumParams(), d)
	}
	og, ng := or.Groups(), net.Groups()
	if len(og) != len(ng) {
		t.Fatalf("oracle has %d groups, engine %d", len(og), len(ng))
	}
	for k := range og {
		if og[k].Offset != ng[k].Offset || og[k].Len != ng[k].Len {
			t.Fatalf("group %d: oracle [%d,+%d), engine %s [%d,+%d)", k, og[k].Offset, og[k].Len, ng[k].Name, ng[k].Offset, ng[k].Len)
		}
	}
	classes := max(net.OutputShape().Size(), 2)
	x, y, tg := data(spec, classes, n, seed+1)

	got, gotL := make([]float64, n*d), make([]float64, n)
	if err := net.PerSampleGrads(x, nn.Target[float64]{Y: y, T: tg}, n, got, gotL); err != nil {
		t.Fatal(err)
	}
	want, wantL := make([]float64, n*d), make([]float64, n)
	if err := or.PerSampleGrads(p, x, y, tg, n, want, wantL); err != nil {
		t.Fatal(err)
	}
	if e := relErr(gotL, wantL); e > 1e-12 {
		t.Errorf("losses %v, oracle %v", gotL, wantL)
	}
	worst := 0.0
	for i := 0; i < n; i++ {
		e := relErr(got[i*d:(i+1)*d], want[i*d:(i+1)*d])
		if e > 1e-9 || math.IsNaN(e) {
			t.Errorf("example %d: per-sample gradient relative error %.3g", i, e)
		}
		worst = math.Max(worst, e)
	}

	k := len(ng)
	norms := make([]float64, n*k)
	if err := net.PerSampleNormsSq(x, nn.Target[float64]{Y: y, T: tg}, n, norms, gotL); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		for j, g := range ng {
			w := sumSq(want[i*d+g.Offset : i*d+g.Offset+g.Len])
			if math.Abs(norms[i*k+j]-w) > 1e-9*w {
				t.Errorf("example %d group %s: ‖g‖² %.17g, oracle %.17g", i, g.Name, norms[i*k+j], w)
			}
		}
	}
	return worst
}

func sumSq(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s
}

// TestEngineLayersMatchOracle covers each layer type and loss on small inputs.
func TestEngineLayersMatchOracle(t *testing.T) {
	img := func(c, h int) nn.Shape { return nn.Shape{C: c, H: h, W: h} }
	convHead := func(c, h int, conv *nn.Conv2d[float64], rest ...nn.Layer[float64]) []nn.Layer[float64] {
		ls := append([]nn.Layer[float64]{conv}, rest...)
		return append(ls, nn.NewFlatten[float64](), nn.NewLinear[float64](outSize(img(c, h), ls), 3, true))
	}
	cases := []struct {
		name   string
		in     nn.Shape
		loss   graph.Loss
		layers []nn.Layer[float64]
	}{
		{"linear-softmax", nn.Vec(7), graph.SoftmaxCrossEntropy, []nn.Layer[float64]{nn.NewLinear[float64](7, 4, true)}},
		{"linear-nobias", nn.Vec(7), graph.SoftmaxCrossEntropy, []nn.Layer[float64]{nn.NewLinear[float64](7, 3, false)}},
		{"logistic", nn.Vec(6), graph.Logistic, []nn.Layer[float64]{nn.NewLinear[float64](6, 1, true)}},
		{"squared", nn.Vec(6), graph.Squared, []nn.Layer[float64]{nn.NewLinear[float64](6, 1, true)}},
		{"mlp-tanh", nn.Vec(8), graph.SoftmaxCrossEntropy, []nn.Layer[float64]{
			nn.NewLinear[float64](8, 6, true), nn.NewTanh[float64](), nn.NewLinear[float64](6, 3, true)}},
		{"mlp-relu", nn.Vec(8), graph.SoftmaxCrossEntropy, []nn.Layer[float64]{
			nn.NewLinear[float64](8, 6, true), nn.NewReLU[float64](), nn.NewLinear[float64](6, 5, true), nn.NewReLU[float64](), nn.NewLinear[float64](5, 3, true)}},
		{"conv-s1-p0-bias", img(2, 5), graph.SoftmaxCrossEntropy, convHead(2, 5, nn.NewConv2d[float64](2, 3, 3, 1, 0, true), nn.NewTanh[float64]())},
		{"conv-s2-p1-bias", img(2, 6), graph.SoftmaxCrossEntropy, convHead(2, 6, nn.NewConv2d[float64](2, 3, 3, 2, 1, true), nn.NewTanh[float64]())},
		{"conv-s2-p2-nobias", img(1, 7), graph.SoftmaxCrossEntropy, convHead(1, 7, nn.NewConv2d[float64](1, 2, 4, 2, 2, false), nn.NewTanh[float64]())},
		{"conv-1x1-s2", img(3, 5), graph.SoftmaxCrossEntropy, convHead(3, 5, nn.NewConv2d[float64](3, 4, 1, 2, 0, false))},
		{"maxpool", img(2, 6), graph.SoftmaxCrossEntropy, convHead(2, 6, nn.NewConv2d[float64](2, 3, 3, 1, 1, true), nn.NewMaxPool2d[float64](2, 2))},
		{"maxpool-s1", img(2, 6), graph.SoftmaxCrossEntropy, convHead(2, 6, nn.NewConv2d[float64](2, 3, 3, 1, 1, true), nn.NewTanh[float64](), nn.NewMaxPool2d[float64](2, 1))},
		{"avgpool", img(2, 6), graph.SoftmaxCrossEntropy, convHead(2, 6, nn.NewConv2d[float64](2, 3, 3, 1, 1, true), nn.NewAvgPool2d[float64](2, 2))},
		{"groupnorm", img(2, 4), graph.SoftmaxCrossEntropy, convHead(2, 4, nn.NewConv2d[float64](2, 4, 3, 1, 1, true), nn.NewGroupNorm[float64](2, 4, true), nn.NewReLU[float64]())},
		{"layernorm-vector", nn.Vec(6), graph.SoftmaxCrossEntropy, []nn.Layer[float64]{
			nn.NewLinear[float64](6, 5, true), nn.NewLayerNorm[float64](5, true), nn.NewTanh[float64](), nn.NewLinear[float64](5, 3, true)}},
		{"globalavgpool", img(2, 4), graph.SoftmaxCrossEntropy, []nn.Layer[float64]{
			nn.NewConv2d[float64](2, 4, 3, 1, 1, true), nn.NewGlobalAvgPool[float64](), nn.NewLinear[float64](4, 3, true)}},
		{"residual-identity", img(3, 4), graph.SoftmaxCrossEntropy, convHead(3, 4, nn.NewConv2d[float64](3, 3, 3, 1, 1, false),
			nn.NewResidual[float64](nn.NewSequential[float64](nn.NewConv2d[float64](3, 3, 3, 1, 1, false), nn.NewTanh[float64]()), nil))},
		{"residual-projection", img(2, 6), graph.SoftmaxCrossEntropy, convHead(2, 6, nn.NewConv2d[float64](2, 3, 3, 1, 1, false),
			nn.NewResidual[float64](
				nn.NewSequential[float64](nn.NewConv2d[float64](3, 4, 3, 2, 1, false), nn.NewGroupNorm[float64](2, 4, true)),
				nn.NewSequential[float64](nn.NewConv2d[float64](3, 4, 1, 2, 0, false), nn.NewGroupNorm[float64](2, 4, true))),
			nn.NewReLU[float64]())},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var loss nn.Loss[float64]
			switch c.loss {
			case graph.SoftmaxCrossEntropy:
				loss = &nn.SoftmaxCrossEntropy[float64]{}
			case graph.Logistic:
				loss = nn.LogisticLoss[float64]{}
			case graph.Squared:
				loss = nn.SquaredLoss[float64]{}
			}
			net, err := nn.NewNetwork(c.in, 4, loss, c.layers...)
			if err != nil {
				t.Fatal(err)
			}
			e := crossCheck(t, net, specOf(c.in, c.loss, c.layers...), 4, uint64(100+ci))
			t.Logf("worst relative error %.2g", e)
		})
	}
}

// outSize builds a throwaway copy of the shape chain to size a linear head.
func outSize(in nn.Shape, layers []nn.Layer[float64]) int {
	s := in
	for _, l := range layers {
		var err error
		if s, err = l.Build(s, 1); err != nil {
			panic(err)
		}
	}
	return s.Size()
}

// mlpZooSpec, mnistZooSpec and resnetZooSpec restate the zoo architectures
// from their documentation, independently of the zoo's code.
func mlpZooSpec(in int, widths []int, out int, act string) graph.Spec {
	return graph.Spec{Input: []int{in}, Loss: graph.SoftmaxCrossEntropy, Build: func(b *graph.Builder, x *G.Node) *G.Node {
		for i, w := range widths {
			x = b.Linear(fmt.Sprintf("fc%d", i), x, w, true)
			if act == "relu" {
				x = b.ReLU(x)
			} else {
				x = b.Tanh(x)
			}
		}
		return b.Linear("out", x, out, true)
	}}
}

func mnistZooSpec() graph.Spec { return mnistCNNSpec() }

// resnetZooSpec: 3×3 stem conv to 16 (no bias), GN(4), ReLU; stages of
// widths 16/32/64 with blocks[s] BasicBlocks (conv-GN-ReLU-conv-GN plus the
// identity, or a 1×1 stride-2 conv + GN projection when the shape changes),
// ReLU after each sum; global average pool; Linear(64, classes).
func resnetZooSpec(blocks [3]int, classes int) graph.Spec {
	return graph.Spec{Input: []int{3, 32, 32}, Loss: graph.SoftmaxCrossEntropy, Build: func(b *graph.Builder, x *G.Node) *G.Node {
		k := 0
		name := func() string { k++; return fmt.Sprintf("l%d", k) }
		gn := func(h *G.Node) *G.Node { return b.GroupNorm(name(), h, 4, 1e-5) }
		h := b.ReLU(gn(b.Conv2d(name(), x, 16, 3, 1, 1, false)))
		cin := 16
		for s, w := range []int{16, 32, 64} {
			for blk := 0; blk < blocks[s]; blk++ {
				stride := 1
				if s > 0 && blk == 0 {
					stride = 2
				}
				r := b.ReLU(gn(b.Conv2d(name(), h, w, 3, stride, 1, false)))
				r = gn(b.Conv2d(name(), r, w, 3, 1, 1, false))
				sc := h
				if cin != w || stride != 1 {
					sc = gn(b.Conv2d(name(), h, w, 1, stride, 0, false))
				}
				h = b.ReLU(b.Add(r, sc))
				cin = w
			}
		}
		return b.Linear(name(), b.GlobalAvgPool(h), classes, true)
	}}
}

// scatCNNZooSpec: Tramèr & Boneh's [64, M, 64] CNN on ScatterNet features:
// conv 3×3 to 64 (padding 1, bias), tanh, max-pool 2/2, conv 3×3 64→64
// (padding 1, bias), tanh, flatten, Linear to the classes.
func scatCNNZooSpec(c, h, w, classes int) graph.Spec {
	return graph.Spec{Input: []int{c, h, w}, Loss: graph.SoftmaxCrossEntropy, Build: func(b *graph.Builder, x *G.Node) *G.Node {
		y := b.MaxPool2d(b.Tanh(b.Conv2d("conv1", x, 64, 3, 1, 1, true)), 2, 2)
		y = b.Tanh(b.Conv2d("conv2", y, 64, 3, 1, 1, true))
		return b.Linear("fc", b.Flatten(y), classes, true)
	}}
}

// TestZooMatchesOracle checks the zoo's models built in float64.
func TestZooMatchesOracle(t *testing.T) {
	type zc struct {
		name  string
		build func() (*nn.Network[float64], error)
		spec  graph.Spec
		n     int
		long  bool
	}
	cases := []zc{
		{"logreg-10", func() (*nn.Network[float64], error) { return models.LogisticRegressionNet[float64](20, 10, 4) },
			linearSpec(20, 10, graph.SoftmaxCrossEntropy, true), 4, false},
		{"logreg-binary", func() (*nn.Network[float64], error) { return models.LogisticRegressionNet[float64](20, 2, 4) },
			linearSpec(20, 1, graph.Logistic, true), 4, false},
		{"linreg", func() (*nn.Network[float64], error) { return models.LinearRegressionNet[float64](20, 4) },
			linearSpec(20, 1, graph.Squared, true), 4, false},
		{"mlp-relu", func() (*nn.Network[float64], error) {
			return models.MLPNet[float64](30, []int{16, 8}, 10, "relu", 4)
		}, mlpZooSpec(30, []int{16, 8}, 10, "relu"), 4, false},
		{"mlp-tanh", func() (*nn.Network[float64], error) {
			return models.MLPNet[float64](30, []int{16}, 10, "tanh", 4)
		}, mlpZooSpec(30, []int{16}, 10, "tanh"), 4, false},
		{"mnist-cnn", func() (*nn.Network[float64], error) { return models.MNISTCNNNet[float64](3) }, mnistZooSpec(), 3, false},
		{"scatcnn", func() (*nn.Network[float64], error) {
			return models.ScatterCNNNet[float64](nn.Shape{C: 5, H: 6, W: 6}, 4, 3)
		}, scatCNNZooSpec(5, 6, 6, 4), 3, false},
		{"resnet20-gn", func() (*nn.Network[float64], error) {
			return models.ResNetGNNet[float64](models.CIFAR, [3]int{3, 3, 3}, 10, 2)
		}, resnetZooSpec([3]int{3, 3, 3}, 10), 2, true},
		{"resnet22-gn", func() (*nn.Network[float64], error) {
			return models.ResNetGNNet[float64](models.CIFAR, [3]int{3, 4, 3}, 10, 2)
		}, resnetZooSpec([3]int{3, 4, 3}, 10), 2, true},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.long && testing.Short() {
				t.Skip("long oracle check; run without -short")
			}
			net, err := c.build()
			if err != nil {
				t.Fatal(err)
			}
			e := crossCheck(t, net, c.spec, c.n, uint64(200+ci))
			t.Logf("%d parameters, worst relative error %.2g", net.NumParams(), e)
		})
	}
}

// TestDropoutMatchesOracle checks per-sample gradients through Dropout
// against the oracle with the same mask: the engine draws its mask from its
// stream; the test replays the stream (P(drop) = p, survivors scaled by
// 1/(1−p)) and feeds each example's mask to the oracle's mask node.
func TestDropoutMatchesOracle(t *testing.T) {
	const n, p = 4, 0.4
	img := nn.Shape{C: 2, H: 4, W: 4}
	cases := []struct {
		name   string
		in     nn.Shape
		layers func(d *nn.Dropout[float64]) []nn.Layer[float64]
	}{
		{"vector", nn.Vec(6), func(d *nn.Dropout[float64]) []nn.Layer[float64] {
			return []nn.Layer[float64]{nn.NewLinear[float64](6, 8, true), nn.NewTanh[float64](), d, nn.NewLinear[float64](8, 3, true)}
		}},
		{"image", img, func(d *nn.Dropout[float64]) []nn.Layer[float64] {
			return []nn.Layer[float64]{nn.NewConv2d[float64](2, 3, 3, 1, 1, true), nn.NewTanh[float64](), d,
				nn.NewFlatten[float64](), nn.NewLinear[float64](3*4*4, 3, true)}
		}},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := rng.New(uint64(400 + ci))
			d := nn.NewDropout[float64](p, s.Child("dropout"))
			layers := c.layers(d)
			net, err := nn.NewNetwork(c.in, n, &nn.SoftmaxCrossEntropy[float64]{}, layers...)
			if err != nil {
				t.Fatal(err)
			}
			net.Init(s.Child("init"))
			params := net.Params()
			for i := range params {
				params[i] += 0.1 * s.NormFloat64()
			}
			spec := specOf(c.in, graph.SoftmaxCrossEntropy, layers...)
			or, err := graph.NewOracle(spec)
			if err != nil {
				t.Fatal(err)
			}
			defer or.Close()
			dim := net.NumParams()
			if or.NumParams() != dim {
				t.Fatalf("oracle has %d parameters, engine %d", or.NumParams(), dim)
			}
			mask := dropoutMasks[d]
			size := mask.Shape().TotalSize()
			x, y, _ := data(spec, 3, n, uint64(500+ci))
			in := c.in.Size()

			state, err := d.Stream.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			got, gotL := make([]float64, n*dim), make([]float64, n)
			if err := net.PerSampleGrads(x, nn.Target[float64]{Y: y}, n, got, gotL); err != nil {
				t.Fatal(err)
			}
			replay := rng.New(0)
			if err := replay.UnmarshalBinary(state); err != nil {
				t.Fatal(err)
			}
			masks := make([]float64, n*size)
			dropped := 0
			for j := range masks {
				if replay.Float64() < p {
					dropped++
				} else {
					masks[j] = 1 / (1 - p)
				}
			}
			if dropped == 0 || dropped == len(masks) {
				t.Fatalf("%d of %d values dropped: the test needs a mixed mask", dropped, len(masks))
			}
			oracle := func(i int, m []float64) ([]float64, float64) {
				copy(mask.Data().([]float64), m)
				g, l := make([]float64, dim), make([]float64, 1)
				if err := or.PerSampleGrads(params, x[i*in:(i+1)*in], y[i:i+1], nil, 1, g, l); err != nil {
					t.Fatal(err)
				}
				return g, l[0]
			}
			for i := range n {
				want, wantL := oracle(i, masks[i*size:(i+1)*size])
				if e := relErr(gotL[i:i+1], []float64{wantL}); e > 1e-12 {
					t.Errorf("example %d: loss %v, oracle %v", i, gotL[i], wantL)
				}
				if e := relErr(got[i*dim:(i+1)*dim], want); e > 1e-9 || math.IsNaN(e) {
					t.Errorf("example %d: per-sample gradient relative error %.3g", i, e)
				}
			}
			// The mask matters: without it the oracle disagrees.
			ones := make([]float64, size)
			for j := range ones {
				ones[j] = 1
			}
			if want, _ := oracle(0, ones); relErr(got[:dim], want) < 1e-3 {
				t.Error("engine gradient matches the oracle without dropout: the mask was not applied")
			}
		})
	}
}
