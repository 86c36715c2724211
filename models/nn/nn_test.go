package nn

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// arch returns a small test architecture by name, in either precision, so
// the float64 and float32 networks are the same definition.
func arch[T Float](name string) (Shape, Loss[T], []Layer[T]) {
	switch name {
	case "linear-ce":
		return Vec(5), &SoftmaxCrossEntropy[T]{}, []Layer[T]{NewLinear[T](5, 3, true)}
	case "linear-nobias-ce":
		return Vec(4), &SoftmaxCrossEntropy[T]{}, []Layer[T]{NewLinear[T](4, 3, false)}
	case "logistic":
		return Vec(6), LogisticLoss[T]{}, []Layer[T]{NewLinear[T](6, 1, true)}
	case "squared":
		return Vec(4), SquaredLoss[T]{}, []Layer[T]{NewLinear[T](4, 1, true)}
	case "mlp-tanh":
		return Vec(6), &SoftmaxCrossEntropy[T]{}, []Layer[T]{NewLinear[T](6, 5, true), NewTanh[T](), NewLinear[T](5, 4, true), NewTanh[T](), NewLinear[T](4, 3, true)}
	case "mlp-relu-image":
		return Shape{C: 2, H: 2, W: 2}, &SoftmaxCrossEntropy[T]{}, []Layer[T]{NewFlatten[T](), NewLinear[T](8, 6, true), NewReLU[T](), NewLinear[T](6, 3, true)}
	case "residual-mlp":
		return Vec(5), &SoftmaxCrossEntropy[T]{}, []Layer[T]{
			NewLinear[T](5, 4, true),
			NewResidual[T](NewSequential[T](NewTanh[T](), NewLinear[T](4, 4, true)), nil),
			NewResidual[T](NewLinear[T](4, 3, true), NewLinear[T](4, 3, false)),
			NewTanh[T](), NewLinear[T](3, 2, true)}
	case "conv":
		return Shape{C: 2, H: 7, W: 6}, &SoftmaxCrossEntropy[T]{}, []Layer[T]{
			NewConv2d[T](2, 3, 3, 2, 1, true), NewTanh[T](), NewConv2d[T](3, 2, 2, 1, 0, false),
			NewFlatten[T](), NewLinear[T](2*3*2, 3, true)}
	case "conv-pool":
		return Shape{C: 1, H: 8, W: 8}, &SoftmaxCrossEntropy[T]{}, []Layer[T]{
			NewConv2d[T](1, 3, 3, 1, 1, true), NewTanh[T](), NewMaxPool2d[T](2, 1),
			NewConv2d[T](3, 4, 3, 2, 0, true), NewReLU[T](), NewAvgPool2d[T](2, 1),
			NewGlobalAvgPool[T](), NewLinear[T](4, 3, true)}
	case "groupnorm":
		return Shape{C: 4, H: 3, W: 3}, &SoftmaxCrossEntropy[T]{}, []Layer[T]{
			NewConv2d[T](4, 4, 3, 1, 1, false), NewGroupNorm[T](2, 4, true), NewReLU[T](),
			NewFlatten[T](), NewLinear[T](36, 3, true)}
	case "layernorm-mlp":
		return Vec(6), &SoftmaxCrossEntropy[T]{}, []Layer[T]{
			NewLinear[T](6, 5, true), NewGroupNorm[T](1, 5, true), NewTanh[T](), NewLinear[T](5, 3, true)}
	case "resblock-gn":
		body := NewSequential[T](NewConv2d[T](2, 4, 3, 2, 1, false), NewGroupNorm[T](2, 4, true), NewReLU[T](),
			NewConv2d[T](4, 4, 3, 1, 1, false), NewGroupNorm[T](2, 4, false))
		sc := NewSequential[T](NewConv2d[T](2, 4, 1, 2, 0, false), NewGroupNorm[T](2, 4, true))
		return Shape{C: 2, H: 6, W: 6}, &SoftmaxCrossEntropy[T]{}, []Layer[T]{
			NewResidual[T](body, sc), NewReLU[T](), NewGlobalAvgPool[T](), NewLinear[T](4, 3, true)}
	case "conv-flip-ws":
		// Stride-1 convolutions after the first layer (the flip path, with
		// and without bias) and a weight-standardised one.
		return Shape{C: 2, H: 5, W: 5}, &SoftmaxCrossEntropy[T]{}, []Layer[T]{
			NewConv2d[T](2, 3, 3, 2, 1, true), NewTanh[T](), NewConv2d[T](3, 3, 3, 1, 1, true), NewTanh[T](),
			NewWSConv2d[T](3, 2, 3, 1, 1), NewGroupNorm[T](1, 2, true), NewFlatten[T](), NewLinear[T](2*3*3, 3, true)}
	}
	panic("unknown arch " + name)
}

func build[T Float](t *testing.T, name string, maxBatch int, seed uint64) *Network[T] {
	t.Helper()
	in, loss, layers := arch[T](name)
	net, err := NewNetwork(in, maxBatch, loss, layers...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s := rng.New(seed)
	net.Init(s)
	// Perturb the parameters away from the init (GroupNorm's γ=1, β=0) so
	// that every term of the gradient is exercised.
	for j := range net.Params() {
		net.Params()[j] += T(0.1 * s.NormFloat64())
	}
	return net
}

func chunkFor(t *testing.T, name string, net *Network[float64], n int, seed uint64) gradCheck {
	s := rng.New(seed)
	c := gradCheck{net: net, x: randn(s, n*net.InputShape().Size(), 1), n: n}
	switch net.loss.(type) {
	case LogisticLoss[float64]:
		c.tg.Y = labels(s, n, 2)
	case SquaredLoss[float64]:
		c.tg.T = randn(s, n, 1)
	default:
		c.tg.Y = labels(s, n, net.OutputShape().Size())
	}
	return c
}

var archNames = []string{"linear-ce", "linear-nobias-ce", "logistic", "squared", "mlp-tanh", "mlp-relu-image",
	"residual-mlp", "conv", "conv-pool", "groupnorm", "layernorm-mlp", "resblock-gn"}

func TestPerSampleGradsFiniteDifferences(t *testing.T) {
	for _, name := range archNames {
		t.Run(name, func(t *testing.T) {
			net := build[float64](t, name, 5, 1)
			c := chunkFor(t, name, net, 5, 2)
			c.run(t)
			c.independence(t, 1)
			// A chunk smaller than MaxBatch works on the same buffers.
			c.n = 3
			c.run(t)
		})
	}
}

func TestFloat32AgreesWithFloat64(t *testing.T) {
	for _, name := range archNames {
		t.Run(name, func(t *testing.T) {
			net := build[float64](t, name, 4, 1)
			c := chunkFor(t, name, net, 4, 2)
			agreeF32(t, c, build[float32](t, name, 4, 1), 1e-4)
		})
	}
}

func TestGroupsCoverParams(t *testing.T) {
	net := build[float64](t, "resblock-gn", 2, 1)
	want := []Group{
		{"0.residual.0.seq.0.conv2d", 0, 72},
		{"0.residual.0.seq.1.groupnorm", 72, 8},
		{"0.residual.0.seq.3.conv2d", 80, 144},
		{"0.residual.1.seq.0.conv2d", 224, 8},
		{"0.residual.1.seq.1.groupnorm", 232, 8},
		{"3.linear", 240, 15},
	}
	got := net.Groups()
	if len(got) != len(want) {
		t.Fatalf("groups %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("group %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if net.NumParams() != 255 {
		t.Errorf("NumParams %d, want 255", net.NumParams())
	}
}

func TestLossValues(t *testing.T) {
	ce := &SoftmaxCrossEntropy[float64]{}
	if err := ce.Check(Vec(3)); err != nil {
		t.Fatal(err)
	}
	ce2 := &SoftmaxCrossEntropy[float64]{}
	_ = ce2.Check(Vec(2))
	tests := []struct {
		name   string
		loss   Loss[float64]
		z      []float64
		tg     Target[float64]
		want   float64
		wantDz []float64
	}{
		// log(e^1+e^2+e^3) − 1 = 2.4076059644443806.
		{"ce", ce, []float64{1, 2, 3}, Target[float64]{Y: []int{0}}, 2.4076059644443806,
			[]float64{0.09003057317038046 - 1, 0.24472847105479764, 0.6652409557748219}},
		// No overflow at z = 1000: ℓ = 1000, dz = (1, −1).
		{"ce-large", ce2, []float64{1000, 0}, Target[float64]{Y: []int{1}}, 1000, []float64{1, -1}},
		{"logistic-0", LogisticLoss[float64]{}, []float64{0}, Target[float64]{Y: []int{1}}, math.Ln2, []float64{-0.5}},
		{"logistic-large", LogisticLoss[float64]{}, []float64{800}, Target[float64]{Y: []int{0}}, 800, []float64{1}},
		{"logistic-small", LogisticLoss[float64]{}, []float64{-800}, Target[float64]{Y: []int{0}}, 0, []float64{0}},
		{"squared", SquaredLoss[float64]{}, []float64{3}, Target[float64]{T: []float64{1}}, 2, []float64{2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := []float64{0}
			dz := make([]float64, len(tc.z))
			if err := tc.loss.Eval(tc.z, 1, tc.tg, l, dz); err != nil {
				t.Fatal(err)
			}
			if math.Abs(l[0]-tc.want) > 1e-12*max(1, tc.want) {
				t.Errorf("loss %.17g, want %.17g", l[0], tc.want)
			}
			for j := range dz {
				if math.Abs(dz[j]-tc.wantDz[j]) > 1e-12 {
					t.Errorf("dz[%d] = %.17g, want %.17g", j, dz[j], tc.wantDz[j])
				}
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	net := build[float64](t, "linear-ce", 4, 1)
	x := make([]float64, 20)
	g := make([]float64, 4*net.NumParams())
	l := make([]float64, 4)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"label", net.PerSampleGrads(x, Target[float64]{Y: []int{0, 3, 0, 0}}, 4, g, l), "label 3"},
		{"too many", net.PerSampleGrads(make([]float64, 25), Target[float64]{Y: make([]int, 5)}, 5, make([]float64, 5*net.NumParams()), make([]float64, 5)), "max batch"},
		{"short x", net.PerSampleGrads(x[:10], Target[float64]{Y: make([]int, 4)}, 4, g, l), "input values"},
		{"no chunk", func() error {
			_, _, _ = net.Evaluate(x, Target[float64]{Y: make([]int, 4)}, 4)
			return net.AccumulateScaled(make([]float64, 4), make([]float64, net.NumParams()))
		}(), "without a preceding"},
	}
	for _, tc := range tests {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to mention %q", tc.name, tc.err, tc.want)
		}
	}
	if _, err := NewNetwork[float64](Vec(3), 4, &SoftmaxCrossEntropy[float64]{}, NewLinear[float64](4, 2, true)); err == nil {
		t.Error("shape mismatch accepted")
	}
}

func TestBatchNormRefused(t *testing.T) {
	for _, kind := range []string{"batchnorm", "bn"} {
		l, err := NewNorm[float32](kind, 4, 16)
		if err == nil || l != nil || !strings.Contains(err.Error(), "GroupNorm") {
			t.Errorf("%s: got (%v, %v), want an error naming GroupNorm", kind, l, err)
		}
	}
	if _, err := NewBatchNorm[float64](8); err == nil || !strings.Contains(err.Error(), "GroupNorm") {
		t.Errorf("NewBatchNorm: %v", err)
	}
	if l, err := NewNorm[float32]("groupnorm", 4, 16); err != nil || l.Kind() != "groupnorm" {
		t.Errorf("groupnorm: %v %v", l, err)
	}
}

// TestDropout checks the mask statistics and, with the mask replayed from a
// saved stream state, per-sample gradients against finite differences.
func TestDropout(t *testing.T) {
	s := rng.New(5)
	d := NewDropout[float64](0.3, s.Child("dropout"))
	net, err := NewNetwork[float64](Vec(6), 4, &SoftmaxCrossEntropy[float64]{},
		NewLinear[float64](6, 40, true), NewTanh[float64](), d, NewLinear[float64](40, 3, true))
	if err != nil {
		t.Fatal(err)
	}
	net.Init(s)
	// Mask statistics: P(zero) = 0.3, survivors scaled by 1/0.7.
	x := randn(s, 4*6, 1)
	state, _ := d.Stream.MarshalBinary()
	if _, err := net.Forward(x, 4); err != nil {
		t.Fatal(err)
	}
	zeros := 0
	for _, m := range d.mask[:160] {
		switch {
		case m == 0:
			zeros++
		case math.Abs(m-1/0.7) > 1e-15:
			t.Fatalf("mask value %v", m)
		}
	}
	// 160 draws, p = 0.3: mean 48, sd 5.8; ±4 sd.
	if zeros < 25 || zeros > 71 {
		t.Errorf("%d of 160 dropped, want about 48", zeros)
	}
	// Evaluation is the identity: Evaluate equals a net without dropout.
	net.SetTraining(false)
	out1, _ := net.Forward(x, 4)
	o1 := append([]float64(nil), out1...)
	d.P = 0
	out2, _ := net.Forward(x, 4)
	for j := range o1 {
		if o1[j] != out2[j] {
			t.Fatal("dropout active in evaluation")
		}
	}
	d.P = 0.3
	net.SetTraining(true)
	// Per-sample gradient with the mask fixed: replay the stream before each
	// forward pass, and compare with finite differences of a single sample.
	tg := Target[float64]{Y: []int{0, 2, 1, 1}}
	grads := make([]float64, 4*net.NumParams())
	losses := make([]float64, 4)
	replay := func() {
		if err := d.Stream.UnmarshalBinary(state); err != nil {
			t.Fatal(err)
		}
	}
	replay()
	if err := net.PerSampleGrads(x, tg, 4, grads, losses); err != nil {
		t.Fatal(err)
	}
	lossAll := func() []float64 {
		replay()
		l := make([]float64, 4)
		g := make([]float64, 4*net.NumParams())
		if err := net.PerSampleGrads(x, tg, 4, g, l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	p := net.Params()
	const h = 1e-5
	for _, j := range []int{0, 7, 100, 239, 245, 300, net.NumParams() - 1} {
		old := p[j]
		p[j] = old + h
		lp := lossAll()
		p[j] = old - h
		lm := lossAll()
		p[j] = old
		for i := range 4 {
			fd := (lp[i] - lm[i]) / (2 * h)
			g := grads[i*net.NumParams()+j]
			if math.Abs(fd-g) > 1e-7*max(1, math.Abs(g)) {
				t.Errorf("sample %d param %d: grad %.10g, finite difference %.10g", i, j, g, fd)
			}
		}
	}
}

// TestConvWithoutCache repeats the checks with Conv2d's per-sample gradient
// cache off, so AccumulateScaled takes the recomputing path, and the norms
// come from the direct product or from the ghost-norm Gram identity.
func TestConvWithoutCache(t *testing.T) {
	old, oldMode := CacheLimit, normMode
	CacheLimit = 0
	defer func() { CacheLimit, normMode = old, oldMode }()
	for _, mode := range []int{1, 2} {
		normMode = mode
		for _, name := range []string{"conv", "conv-pool", "resblock-gn"} {
			t.Run(fmt.Sprintf("%s/mode=%d", name, mode), func(t *testing.T) {
				net := build[float64](t, name, 4, 1)
				chunkFor(t, name, net, 4, 2).run(t)
			})
		}
	}
}

// Network.Tensors names and shapes every parameter tensor in PyTorch's
// layout, and the tensors tile Params in order (hand count for a small
// conv net: conv 3→4 k3 with bias, GroupNorm(2, 4), linear 4·8·8→5).
func TestNetworkTensors(t *testing.T) {
	net, err := NewNetwork[float32](Shape{3, 8, 8}, 2, &SoftmaxCrossEntropy[float32]{},
		&Conv2d[float32]{Cin: 3, Cout: 4, K: 3, Stride: 1, Pad: 1, Bias: true},
		&GroupNorm[float32]{Groups: 2, Channels: 4, Affine: true},
		&Linear[float32]{In: 4 * 8 * 8, Out: 5, Bias: true},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		suffix string
		shape  []int
	}{
		{"conv2d.weight", []int{4, 3, 3, 3}}, {"conv2d.bias", []int{4}},
		{"weight", []int{4}}, {"bias", []int{4}},
		{"linear.weight", []int{5, 256}}, {"linear.bias", []int{5}},
	}
	ts := net.Tensors()
	if len(ts) != len(want) {
		t.Fatalf("%d tensors, want %d: %+v", len(ts), len(want), ts)
	}
	off := 0
	for i, w := range want {
		if !strings.HasSuffix(ts[i].Name, w.suffix) || fmt.Sprint(ts[i].Shape) != fmt.Sprint(w.shape) || ts[i].Offset != off {
			t.Errorf("tensor %d: %s %v at %d, want …%s %v at %d", i, ts[i].Name, ts[i].Shape, ts[i].Offset, w.suffix, w.shape, off)
		}
		off += ts[i].Len()
	}
	if off != net.NumParams() {
		t.Errorf("tensors cover %d of %d parameters", off, net.NumParams())
	}
}

// TestConvKeptIm2col repeats the checks with Conv2d keeping U_i from the
// training forward pass (from the second chunk on, once Backward has shown
// the layer builds weight gradients from U_i), with and without the
// per-sample gradient cache: the kept U must be the current chunk's, also
// after Evaluate's forward passes on other data in between.
func TestConvKeptIm2col(t *testing.T) {
	old := CacheLimit
	defer func() { CacheLimit = old }()
	for _, cache := range []int{old, 0} {
		CacheLimit = cache
		for _, name := range []string{"conv", "conv-pool", "resblock-gn"} {
			t.Run(fmt.Sprintf("%s/cache=%d", name, cache), func(t *testing.T) {
				net := build[float64](t, name, 4, 1)
				warm := chunkFor(t, name, net, 4, 7)
				if err := net.PerSampleGrads(warm.x, warm.tg, 4, make([]float64, 4*net.NumParams()), make([]float64, 4)); err != nil {
					t.Fatal(err)
				}
				c := chunkFor(t, name, net, 4, 2)
				if err := net.PerSampleGrads(c.x, c.tg, 4, make([]float64, 4*net.NumParams()), make([]float64, 4)); err != nil {
					t.Fatal(err)
				}
				if !keptAny(net.Layers()) {
					t.Fatal("no Conv2d kept its im2col: the test does not exercise the kept path")
				}
				c.run(t)
			})
		}
	}
}

// keptAny reports whether a Conv2d among layers (or inside them) holds the
// current chunk's U_i.
func keptAny(layers []Layer[float64]) bool {
	for _, l := range layers {
		switch l := l.(type) {
		case *Conv2d[float64]:
			if l.uKept {
				return true
			}
		case *Sequential[float64]:
			if keptAny(l.layers) {
				return true
			}
		case *Residual[float64]:
			if keptAny([]Layer[float64]{l.Body, l.Shortcut}) {
				return true
			}
		}
	}
	return false
}
