package models

import (
	"math"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/rng"
)

func TestParamCounts(t *testing.T) {
	mk := func(m *Net, err error) *Net {
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name   string
		m      *Net
		want   int
		groups []int // group lengths, nil = not checked
	}{
		// 784·10 + 10.
		{"logreg", mk(NewLogisticRegression(784, 10, Options{})), 7850, []int{7850}},
		// binary: one logit, 5 + 1.
		{"logreg-binary", mk(NewLogisticRegression(5, 2, Options{})), 6, []int{6}},
		{"linreg", mk(NewLinearRegression(7, Options{})), 8, []int{8}},
		// 784·256 + 256 + 256·10 + 10.
		{"mlp", mk(NewMLP(784, []int{256}, 10, "relu", Options{})), 203530, []int{200960, 2570}},
		// conv 16·1·64 + 16, conv 32·16·16 + 32, fc 512·32 + 32, fc 32·10 + 10 (Opacus: 26,010).
		{"mnistcnn", mk(NewMNISTCNN(Options{})), 26010, []int{1040, 8224, 16416, 330}},
		// stem 432 + GN 32; stage 1: 3·(2·2304 + 64); stage 2: 4608 + 9216 + 128 + 512 + 64
		// + 2·(2·9216 + 128); stage 3: 18432 + 36864 + 256 + 2048 + 128 + 2·(2·36864 + 256); fc 650.
		{"resnet20gn", mk(NewResNet20GN(10, Options{})), 464 + 14016 + 51648 + 205696 + 650, nil},
		// conv 64·243·9 + 64, conv 64·64·9 + 64, fc 64·4·4·10 + 10 (T&B's [64, M, 64]).
		{"scatcnn", mk(NewScatterCNN(nn.Shape{C: 243, H: 8, W: 8}, 10, Options{})), 187210, []int{140032, 36928, 10250}},
		// docs/twice-sampling.md#paper-tables: 291,034 with affine GN (stage 2
		// has one more 18,560 block).
		{"resnet22", mk(NewResNet22(10, Options{})), 291034, nil},
	}
	for _, tc := range tests {
		if got := tc.m.NumParams(); got != tc.want {
			t.Errorf("%s: %d parameters, want %d", tc.name, got, tc.want)
		}
		off := 0
		for k, g := range tc.m.Groups() {
			if g.Offset != off {
				t.Errorf("%s: group %s at %d, want %d", tc.name, g.Name, g.Offset, off)
			}
			if tc.groups != nil && (k >= len(tc.groups) || g.Len != tc.groups[k]) {
				t.Errorf("%s: group %d %s has %d parameters, want %v", tc.name, k, g.Name, g.Len, tc.groups)
			}
			off += g.Len
		}
		if off != tc.want || len(tc.m.Params()) != tc.want {
			t.Errorf("%s: groups cover %d, params %d", tc.name, off, len(tc.m.Params()))
		}
	}
	if m := mk(NewResNet22(10, Options{})); len(m.Groups()) != 1+1+2*10*2+2*2+1 {
		// stem conv+GN, 10 blocks × (2 conv + 2 GN), 2 projection shortcuts × (conv + GN), fc.
		t.Errorf("resnet22: %d groups", len(m.Groups()))
	}
}

// zooCase builds a zoo architecture in either precision at a small size.
func zooNet[T nn.Float](t *testing.T, name string, maxBatch int) *nn.Network[T] {
	t.Helper()
	var net *nn.Network[T]
	var err error
	small := nn.Shape{C: 3, H: 8, W: 8}
	switch name {
	case "logreg":
		net, err = LogisticRegressionNet[T](6, 4, maxBatch)
	case "logreg-binary":
		net, err = LogisticRegressionNet[T](6, 2, maxBatch)
	case "linreg":
		net, err = LinearRegressionNet[T](5, maxBatch)
	case "mlp-tanh":
		net, err = MLPNet[T](6, []int{5, 4}, 3, "tanh", maxBatch)
	case "mlp-relu":
		net, err = MLPNet[T](6, []int{7}, 3, "relu", maxBatch)
	case "mnistcnn":
		net, err = MNISTCNNNet[T](maxBatch)
	case "resnet20gn":
		net, err = ResNetGNNet[T](small, [3]int{3, 3, 3}, 10, maxBatch)
	case "resnet22":
		net, err = ResNetGNNet[T](small, [3]int{3, 4, 3}, 10, maxBatch)
	case "scatcnn":
		net, err = ScatterCNNNet[T](nn.Shape{C: 5, H: 6, W: 6}, 4, maxBatch)
	default:
		t.Fatalf("unknown %s", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	s := rng.New(11)
	net.Init(s)
	for j := range net.Params() { // move off the init (zeros, γ = 1, β = 0)
		net.Params()[j] += T(0.05 * s.NormFloat64())
	}
	return net
}

type chunk64 struct {
	x  []float64
	tg nn.Target[float64]
	n  int
}

func makeChunk(net *nn.Network[float64], n int, seed uint64) chunk64 {
	s := rng.New(seed)
	c := chunk64{n: n, x: make([]float64, n*net.InputShape().Size())}
	for j := range c.x {
		c.x[j] = s.NormFloat64()
	}
	k := net.OutputShape().Size()
	for range n {
		if k == 1 {
			c.tg.T = append(c.tg.T, s.NormFloat64())
			c.tg.Y = append(c.tg.Y, s.IntN(2))
		} else {
			c.tg.Y = append(c.tg.Y, s.IntN(k))
		}
	}
	return c
}

var zooNames = []string{"logreg", "logreg-binary", "linreg", "mlp-tanh", "mlp-relu", "mnistcnn", "resnet20gn", "resnet22", "scatcnn"}

// TestZooFiniteDifferences checks each zoo model's per-sample gradients
// (float64) against central finite differences of the sample's own loss, the
// norm-only path and the scaled sum against the materialised gradients, and
// that perturbing one sample moves no other sample's gradient.
func TestZooFiniteDifferences(t *testing.T) {
	for _, name := range zooNames {
		t.Run(name, func(t *testing.T) {
			const n = 3
			net := zooNet[float64](t, name, n)
			c := makeChunk(net, n, 5)
			d, k := net.NumParams(), len(net.Groups())
			grads := make([]float64, n*d)
			losses := make([]float64, n)
			if err := net.PerSampleGrads(c.x, c.tg, n, grads, losses); err != nil {
				t.Fatal(err)
			}
			sz := net.InputShape().Size()
			lossOf := func(i int) float64 {
				tg := nn.Target[float64]{Y: c.tg.Y[i : i+1]}
				if c.tg.T != nil {
					tg.T = c.tg.T[i : i+1]
				}
				l, _, err := net.Evaluate(c.x[i*sz:(i+1)*sz], tg, 1)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			coords := []int{}
			for _, g := range net.Groups() {
				coords = append(coords, g.Offset, g.Offset+g.Len-1)
			}
			s := rng.New(1)
			for range 40 {
				coords = append(coords, s.IntN(d))
			}
			p := net.Params()
			const h = 1e-5
			for i := range 2 {
				gi := grads[i*d : (i+1)*d]
				scale := 1e-3
				for _, v := range gi {
					scale = max(scale, math.Abs(v))
				}
				for _, j := range coords {
					old := p[j]
					p[j] = old + h
					lp := lossOf(i)
					p[j] = old - h
					lm := lossOf(i)
					p[j] = old
					if fd := (lp - lm) / (2 * h); math.Abs(fd-gi[j]) > 1e-6*scale {
						t.Errorf("sample %d param %d: grad %.12g, finite difference %.12g", i, j, gi[j], fd)
					}
				}
			}
			norms := make([]float64, n*k)
			if err := net.PerSampleNormsSq(c.x, c.tg, n, norms, losses); err != nil {
				t.Fatal(err)
			}
			scales := make([]float64, n*k)
			for j := range scales {
				scales[j] = s.Float64()
			}
			sum := make([]float64, d)
			if err := net.AccumulateScaled(scales, sum); err != nil {
				t.Fatal(err)
			}
			for kk, g := range net.Groups() {
				for i := range n {
					var want float64
					for j := g.Offset; j < g.Offset+g.Len; j++ {
						want += grads[i*d+j] * grads[i*d+j]
					}
					if got := norms[i*k+kk]; math.Abs(got-want) > 1e-10*max(want, 1e-12) {
						t.Errorf("sample %d group %s: norm² %.15g, materialised %.15g", i, g.Name, got, want)
					}
				}
				for j := g.Offset; j < g.Offset+g.Len; j++ {
					var want float64
					for i := range n {
						want += scales[i*k+kk] * grads[i*d+j]
					}
					if math.Abs(sum[j]-want) > 1e-10*max(1, math.Abs(want)) {
						t.Fatalf("scaled sum[%d] (%s) = %.15g, materialised %.15g", j, g.Name, sum[j], want)
					}
				}
			}
			// Independence: perturb sample 2; samples 0 and 1 must not move.
			x := append([]float64(nil), c.x...)
			for j := 2 * sz; j < 3*sz; j++ {
				x[j] += s.NormFloat64()
			}
			after := make([]float64, n*d)
			if err := net.PerSampleGrads(x, c.tg, n, after, losses); err != nil {
				t.Fatal(err)
			}
			for j := range 2 * d {
				if math.Abs(after[j]-grads[j]) > 1e-13*max(1, math.Abs(grads[j])) {
					t.Fatalf("perturbing sample 2 moved sample %d's gradient at %d", j/d, j%d)
				}
			}
		})
	}
}

func TestZooFloat32AgreesWithFloat64(t *testing.T) {
	for _, name := range zooNames {
		t.Run(name, func(t *testing.T) {
			const n = 3
			n64, n32 := zooNet[float64](t, name, n), zooNet[float32](t, name, n)
			for j, v := range n64.Params() {
				n32.Params()[j] = float32(v)
			}
			c := makeChunk(n64, n, 6)
			x32 := make([]float32, len(c.x))
			for j, v := range c.x {
				x32[j] = float32(v)
			}
			tg := nn.Target[float32]{Y: c.tg.Y}
			for _, v := range c.tg.T {
				tg.T = append(tg.T, float32(v))
			}
			d := n64.NumParams()
			g64, g32 := make([]float64, n*d), make([]float32, n*d)
			if err := n64.PerSampleGrads(c.x, c.tg, n, g64, make([]float64, n)); err != nil {
				t.Fatal(err)
			}
			if err := n32.PerSampleGrads(x32, tg, n, g32, make([]float32, n)); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				var diff, norm float64
				for j := i * d; j < (i+1)*d; j++ {
					e := float64(g32[j]) - g64[j]
					diff += e * e
					norm += g64[j] * g64[j]
				}
				if rel := math.Sqrt(diff / norm); rel > 1e-4 {
					t.Errorf("sample %d: float32 differs from float64 by %.3g relative", i, rel)
				}
			}
		})
	}
}

// The weight-standardised ResNet-20 has the plain one's parameter layout
// (raw weights) and 21 convolutions of kind wsconv2d; weight_std is refused
// for the other architectures.
func TestResNetWeightStd(t *testing.T) {
	plain, err := New(Spec{Arch: "resnet20gn"}, Options{MaxBatch: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := New(Spec{Arch: "resnet20gn", WeightStd: true}, Options{MaxBatch: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if ws.NumParams() != plain.NumParams() || ws.NumParams() != 272474 {
		t.Fatalf("params %d, plain %d", ws.NumParams(), plain.NumParams())
	}
	gs, gp := ws.Groups(), plain.Groups()
	nws := 0
	for k := range gs {
		if gs[k].Offset != gp[k].Offset || gs[k].Len != gp[k].Len {
			t.Fatalf("group %d: %v vs %v", k, gs[k], gp[k])
		}
		if strings.Contains(gs[k].Name, "wsconv2d") {
			nws++
		}
	}
	if nws != 21 { // stem + 18 block convolutions + 2 projections
		t.Fatalf("%d weight-standardised convolutions, want 21", nws)
	}
	if _, err := New(Spec{Arch: "mlp", InputSize: 4, Classes: 2, WeightStd: true}, Options{}); err == nil {
		t.Fatal("weight_std accepted for an MLP")
	}
}
