package graph_test

import (
	"math"

	G "gorgonia.org/gorgonia"

	"github.com/dptrain/dptrain/models/graph"
	"github.com/dptrain/dptrain/rng"
)

// arch is a small architecture from the zoo's building blocks, with the data
// it is checked on.
type arch struct {
	name  string
	spec  graph.Spec
	batch int
}

func linearSpec(in, out int, loss graph.Loss, bias bool) graph.Spec {
	return graph.Spec{Input: []int{in}, Loss: loss, Build: func(b *graph.Builder, x *G.Node) *G.Node {
		return b.Linear("fc", x, out, bias)
	}}
}

func mlpSpec(in int, widths []int, out int, act string) graph.Spec {
	return graph.Spec{Input: []int{in}, Loss: graph.SoftmaxCrossEntropy, Build: func(b *graph.Builder, x *G.Node) *G.Node {
		h := x
		for i, w := range widths {
			h = b.Linear("fc"+string(rune('1'+i)), h, w, true)
			if act == "relu" {
				h = b.ReLU(h)
			} else {
				h = b.Tanh(h)
			}
		}
		return b.Linear("out", h, out, true)
	}}
}

func convSpec(c, hw, outC, k, stride, pad int, bias bool) graph.Spec {
	return graph.Spec{Input: []int{c, hw, hw}, Loss: graph.SoftmaxCrossEntropy, Build: func(b *graph.Builder, x *G.Node) *G.Node {
		h := b.Tanh(b.Conv2d("conv", x, outC, k, stride, pad, bias))
		return b.Linear("fc", b.Flatten(h), 3, true)
	}}
}

// mnistCNNSpec is the Opacus / Tramèr & Boneh MNIST CNN: conv 16 8×8 s2 p3,
// tanh, maxpool 2/1, conv 32 4×4 s2, tanh, maxpool 2/1, fc 32, tanh, fc 10.
func mnistCNNSpec() graph.Spec {
	return graph.Spec{Input: []int{1, 28, 28}, Loss: graph.SoftmaxCrossEntropy, Build: func(b *graph.Builder, x *G.Node) *G.Node {
		h := b.MaxPool2d(b.Tanh(b.Conv2d("conv1", x, 16, 8, 2, 3, true)), 2, 1)
		h = b.MaxPool2d(b.Tanh(b.Conv2d("conv2", h, 32, 4, 2, 0, true)), 2, 1)
		h = b.Tanh(b.Linear("fc1", b.Flatten(h), 32, true))
		return b.Linear("fc2", h, 10, true)
	}}
}

// resnetSpec is a tiny ResNet-GN: stem conv + GN + ReLU, one residual block
// (conv-GN-ReLU-conv-GN + identity, ReLU), global average pool, fc.
func resnetSpec() graph.Spec {
	return graph.Spec{Input: []int{3, 6, 6}, Loss: graph.SoftmaxCrossEntropy, Build: func(b *graph.Builder, x *G.Node) *G.Node {
		h := b.ReLU(b.GroupNorm("gn0", b.Conv2d("conv0", x, 4, 3, 1, 1, false), 2, 1e-5))
		r := b.ReLU(b.GroupNorm("gn1", b.Conv2d("conv1", h, 4, 3, 1, 1, false), 2, 1e-5))
		r = b.GroupNorm("gn2", b.Conv2d("conv2", r, 4, 3, 1, 1, false), 2, 1e-5)
		h = b.ReLU(b.Add(h, r))
		return b.Linear("fc", b.GlobalAvgPool(h), 3, true)
	}}
}

func avgPoolSpec() graph.Spec {
	return graph.Spec{Input: []int{2, 6, 6}, Loss: graph.SoftmaxCrossEntropy, Build: func(b *graph.Builder, x *G.Node) *G.Node {
		h := b.AvgPool2d(b.Conv2d("conv", x, 3, 3, 1, 1, true), 2, 2, 0)
		h = b.LayerNorm("ln", b.Tanh(h), 1e-5)
		return b.Linear("fc", b.Flatten(h), 4, true)
	}}
}

// blockSpec wraps one block between a conv and a linear head, to test it alone.
func blockSpec(block func(b *graph.Builder, h *G.Node) *G.Node) graph.Spec {
	return graph.Spec{Input: []int{2, 4, 4}, Loss: graph.SoftmaxCrossEntropy, Build: func(b *graph.Builder, x *G.Node) *G.Node {
		h := block(b, b.Conv2d("conv", x, 4, 3, 1, 1, true))
		return b.Linear("fc", b.Flatten(h), 3, true)
	}}
}

func archs() []arch {
	return []arch{
		{"logreg-softmax", linearSpec(7, 4, graph.SoftmaxCrossEntropy, true), 5},
		{"linear-nobias", linearSpec(7, 3, graph.SoftmaxCrossEntropy, false), 5},
		{"logistic", linearSpec(6, 1, graph.Logistic, true), 6},
		{"squared", linearSpec(6, 1, graph.Squared, true), 6},
		{"mlp-tanh", mlpSpec(8, []int{6, 5}, 3, "tanh"), 4},
		{"mlp-relu", mlpSpec(8, []int{6, 5}, 3, "relu"), 4},
		{"conv-s1-p0-bias", convSpec(2, 5, 3, 3, 1, 0, true), 3},
		{"conv-s2-p1-bias", convSpec(2, 6, 3, 3, 2, 1, true), 3},
		{"conv-s2-p2-nobias", convSpec(1, 7, 2, 4, 2, 2, false), 3},
		{"mnist-cnn", mnistCNNSpec(), 2},
		{"groupnorm", blockSpec(func(b *graph.Builder, h *G.Node) *G.Node { return b.GroupNorm("gn", h, 2, 1e-5) }), 3},
		{"layernorm", blockSpec(func(b *graph.Builder, h *G.Node) *G.Node { return b.LayerNorm("ln", h, 1e-5) }), 3},
		{"avgpool", blockSpec(func(b *graph.Builder, h *G.Node) *G.Node { return b.AvgPool2d(h, 2, 2, 0) }), 3},
		{"avgpool-pad", blockSpec(func(b *graph.Builder, h *G.Node) *G.Node { return b.AvgPool2d(h, 3, 2, 1) }), 3},
		{"globalavgpool", blockSpec(func(b *graph.Builder, h *G.Node) *G.Node { return b.GlobalAvgPool(h) }), 3},
		{"maxpool", blockSpec(func(b *graph.Builder, h *G.Node) *G.Node { return b.MaxPool2d(h, 2, 2) }), 3},
		{"residual", blockSpec(func(b *graph.Builder, h *G.Node) *G.Node {
			return b.Add(h, b.Tanh(b.Conv2d("conv2", h, 4, 3, 1, 1, false)))
		}), 3},
		{"resnet-gn", resnetSpec(), 3},
		// Reshapes of values that a backward pass needs (tanh outputs), then
		// elementwise ops: wrong with Gorgonia's aliasing Reshape.
		{"flatten-after-tanh", graph.Spec{Input: []int{2, 4, 4}, Loss: graph.SoftmaxCrossEntropy, Build: func(b *graph.Builder, x *G.Node) *G.Node {
			h := b.Tanh(b.Flatten(b.Tanh(b.Conv2d("conv", x, 2, 3, 1, 0, true))))
			return b.Linear("fc", h, 3, true)
		}}, 3},
		{"layernorm-after-tanh", graph.Spec{Input: []int{5}, Loss: graph.SoftmaxCrossEntropy, Build: func(b *graph.Builder, x *G.Node) *G.Node {
			return b.Linear("fc2", b.LayerNorm("ln", b.Tanh(b.Linear("fc1", x, 6, true)), 1e-5), 3, true)
		}}, 3},
		{"avgpool-layernorm", avgPoolSpec(), 3},
	}
}

// data draws a chunk of n examples for spec: N(0,1) inputs, uniform labels,
// N(0,1) targets.
func data(spec graph.Spec, classes, n int, seed uint64) (x []float64, y []int, t []float64) {
	s := rng.New(seed)
	in := 1
	for _, d := range spec.Input {
		in *= d
	}
	x = make([]float64, n*in)
	for i := range x {
		x[i] = s.NormFloat64()
	}
	y = make([]int, n)
	t = make([]float64, n)
	for i := range y {
		switch spec.Loss {
		case graph.SoftmaxCrossEntropy:
			y[i] = s.IntN(classes)
		case graph.Logistic:
			y[i] = s.IntN(2)
		}
		t[i] = s.NormFloat64()
	}
	return x, y, t
}

// relErr is max|a−b| / max|b|.
func relErr(a, b []float64) float64 {
	var num, den float64
	for i := range b {
		num = math.Max(num, math.Abs(a[i]-b[i]))
		den = math.Max(den, math.Abs(b[i]))
	}
	if den == 0 {
		return num
	}
	return num / den
}
