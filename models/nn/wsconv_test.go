package nn

import (
	"math"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/dptrain/dptrain/rng"
)

// wsOracle computes, with Gorgonia, the gradient of L = Σ z ⊙ R for one
// sample x (C×H×W) through a weight-standardised convolution of the raw
// weights w (Cout × C·K·K): z = im2col(x)·Ŵᵀ, Ŵ = (w − μ)/√(v + eps) per
// row. r is dL/dz in the engine's layout (Cout × P). It returns dL/dw and
// dL/dx.
func wsOracle(t *testing.T, w, x, r []float64, cin, h, wd, cout, k, stride, pad int, eps float64) (gw, gx []float64) {
	t.Helper()
	g := G.NewGraph()
	m := cin * k * k
	oh, ow := (h+2*pad-k)/stride+1, (wd+2*pad-k)/stride+1
	p := oh * ow
	W := G.NewMatrix(g, tensor.Float64, G.WithShape(cout, m), G.WithName("w"),
		G.WithValue(tensor.New(tensor.WithShape(cout, m), tensor.WithBacking(append([]float64(nil), w...)))))
	X := G.NewTensor(g, tensor.Float64, 4, G.WithShape(1, cin, h, wd), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(1, cin, h, wd), tensor.WithBacking(append([]float64(nil), x...)))))
	rt := make([]float64, p*cout) // R in the P × Cout layout of the product
	for o := range cout {
		for j := range p {
			rt[j*cout+o] = r[o*p+j]
		}
	}
	R := G.NewMatrix(g, tensor.Float64, G.WithShape(p, cout), G.WithName("r"),
		G.WithValue(tensor.New(tensor.WithShape(p, cout), tensor.WithBacking(rt))))
	must := func(n *G.Node, err error) *G.Node {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	mu := must(G.Mean(W, 1))
	cen := must(G.BroadcastSub(W, mu, nil, []byte{1}))
	v := must(G.Mean(must(G.Square(cen)), 1))
	s := must(G.Sqrt(must(G.Add(v, G.NewConstant(eps)))))
	what := must(G.BroadcastHadamardDiv(cen, s, nil, []byte{1}))
	col := must(G.Im2Col(X, tensor.Shape{k, k}, tensor.Shape{pad, pad}, tensor.Shape{stride, stride}, tensor.Shape{1, 1}))
	patches := must(G.Reshape(col, tensor.Shape{p, m}))
	z := must(G.Mul(patches, must(G.Transpose(what))))
	loss := must(G.Sum(must(G.HadamardProd(z, R))))
	if _, err := G.Grad(loss, W, X); err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	dw, err := W.Grad()
	if err != nil {
		t.Fatal(err)
	}
	dx, err := X.Grad()
	if err != nil {
		t.Fatal(err)
	}
	return append([]float64(nil), dw.Data().([]float64)...), append([]float64(nil), dx.Data().([]float64)...)
}

// The layer's per-sample gradients, norms, scaled sums and input gradient
// against the Gorgonia oracle, for stride 1 (flip path) and stride 2, with
// and without the per-sample cache.
func TestWSConv2dMatchesOracle(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		cin, h, cout, k, stride, pad int
		cache                        bool
	}{
		{"3x3-s1", 2, 6, 3, 3, 1, 1, true},
		{"3x3-s2", 3, 7, 4, 3, 2, 1, true},
		{"1x1-s2-nocache", 2, 6, 3, 1, 2, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.cache {
				old := CacheLimit
				CacheLimit = 0
				defer func() { CacheLimit = old }()
			}
			const n = 3
			s := rng.New(11)
			l := NewWSConv2d[float64](tc.cin, tc.cout, tc.k, tc.stride, tc.pad)
			out, err := l.Build(Shape{C: tc.cin, H: tc.h, W: tc.h}, n)
			if err != nil {
				t.Fatal(err)
			}
			np := l.NumParams()
			params := make([]float64, np)
			l.Bind(params)
			l.Init(s.Child("init"))
			for i := range params {
				params[i] += 0.3 * s.NormFloat64() // rows with non-zero means
			}
			isz := tc.cin * tc.h * tc.h
			x := randn(s, n*isz, 1)
			l.Forward(x, n, true)
			r := randn(s, n*out.Size(), 1)
			dx := l.Backward(r, n, true)
			got := make([]float64, n*np)
			l.PerSampleGrads(n, got, np)
			norms := make([]float64, n)
			l.PerSampleNormsSq(n, norms, 1)
			scales := []float64{0.5, -1, 2}
			sum := make([]float64, np)
			sum[0] = 7 // AccumulateScaled adds
			l.AccumulateScaled(n, scales, 1, sum)
			wantSum := make([]float64, np)
			wantSum[0] = 7
			for i := range n {
				gw, gx := wsOracle(t, params, x[i*isz:(i+1)*isz], r[i*out.Size():(i+1)*out.Size()],
					tc.cin, tc.h, tc.h, tc.cout, tc.k, tc.stride, tc.pad, l.Eps)
				var sq float64
				for j, v := range gw {
					if math.Abs(got[i*np+j]-v) > 1e-9*(1+math.Abs(v)) {
						t.Fatalf("sample %d weight %d: %v, oracle %v", i, j, got[i*np+j], v)
					}
					sq += v * v
					wantSum[j] += scales[i] * v
				}
				if math.Abs(norms[i]-sq) > 1e-9*sq {
					t.Fatalf("sample %d: ‖g‖² %v, oracle %v", i, norms[i], sq)
				}
				for j, v := range gx {
					if math.Abs(dx[i*isz+j]-v) > 1e-9*(1+math.Abs(v)) {
						t.Fatalf("sample %d input %d: %v, oracle %v", i, j, dx[i*isz+j], v)
					}
				}
			}
			for j := range sum {
				if math.Abs(sum[j]-wantSum[j]) > 1e-9*(1+math.Abs(wantSum[j])) {
					t.Fatalf("scaled sum %d: %v, oracle %v", j, sum[j], wantSum[j])
				}
			}
			// A standardised row has mean 0 and variance v/(v+eps) ≈ 1.
			for o := range tc.cout {
				var mu, v float64
				m := l.ckk
				for _, w := range l.std[o*m : (o+1)*m] {
					mu += w / float64(m)
				}
				for _, w := range l.std[o*m : (o+1)*m] {
					v += (w - mu) * (w - mu) / float64(m)
				}
				if math.Abs(mu) > 1e-12 || math.Abs(v-1) > 1e-2 {
					t.Fatalf("row %d: mean %v variance %v", o, mu, v)
				}
			}
		})
	}
}
