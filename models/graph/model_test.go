package graph_test

import (
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/models/graph"
	"github.com/dptrain/dptrain/rng"
)

// mixture draws n points of a k-component Gaussian mixture in dim
// dimensions: component means N(0, sep²·I), unit-variance noise; the label is
// the component.
func mixture(s *rng.Stream, means [][]float64, n int) models.Batch {
	dim := len(means[0])
	b := models.Batch{X: make([]float32, n*dim), Y: make([]int, n), N: n}
	for i := 0; i < n; i++ {
		c := s.IntN(len(means))
		b.Y[i] = c
		for j := 0; j < dim; j++ {
			b.X[i*dim+j] = float32(means[c][j] + s.NormFloat64())
		}
	}
	return b
}

func sub(b models.Batch, idx []int, dim int) models.Batch {
	out := models.Batch{X: make([]float32, 0, len(idx)*dim), Y: make([]int, 0, len(idx)), N: len(idx)}
	for _, i := range idx {
		out.X = append(out.X, b.X[i*dim:(i+1)*dim]...)
		out.Y = append(out.Y, b.Y[i])
	}
	return out
}

// TestDPSGDTrainsMixture trains a 2-layer Gorgonia MLP with a minimal DP-SGD
// loop (Poisson sampling, flat per-sample clipping through the norms path,
// Gaussian noise, SGD on the sum divided by the expected batch size) and
// checks the test loss falls and the accuracy comes within 5 points of the
// Bayes classifier's (nearest mean: equal priors, identity covariance) on
// the same test set. The means are close (≈ 3σ apart), so the task is not
// trivial: the Bayes accuracy is about 90%.
func TestDPSGDTrainsMixture(t *testing.T) {
	const (
		dim, classes = 10, 4
		nTrain       = 2000
		q            = 0.05
		clipC        = 1.0
		sigma        = 1.0
		lr           = 2.0
		steps        = 200
		maxBatch     = 64
	)
	s := rng.New(42)
	means := make([][]float64, classes)
	for c := range means {
		means[c] = make([]float64, dim)
		for j := range means[c] {
			means[c][j] = 0.7 * s.NormFloat64()
		}
	}
	train := mixture(s.Child("train"), means, nTrain)
	test := mixture(s.Child("test"), means, 1000)
	spec := graph.Spec{Input: []int{dim}, Loss: graph.SoftmaxCrossEntropy, Build: func(b *graph.Builder, x *G.Node) *G.Node {
		return b.Linear("fc2", b.Tanh(b.Linear("fc1", x, 32, true)), classes, true)
	}}
	m, err := graph.NewModel(spec, maxBatch, 7)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, k := m.NumParams(), len(m.Groups())
	loss0, _, err := m.Evaluate(test)
	if err != nil {
		t.Fatal(err)
	}

	sampler, noise := s.Child("sampler"), s.Child("noise")
	sum := make([]float32, d)
	normsSq := make([]float64, maxBatch*k)
	scales := make([]float32, maxBatch*k)
	losses := make([]float32, maxBatch)
	grads := make([]float32, maxBatch*d)
	for step := 0; step < steps; step++ {
		var idx []int
		for i := 0; i < nTrain; i++ {
			if sampler.Float64() < q {
				idx = append(idx, i)
			}
		}
		clear(sum)
		for lo := 0; lo < len(idx); lo += maxBatch { // physical batches
			chunk := sub(train, idx[lo:min(lo+maxBatch, len(idx))], dim)
			if err := m.PerSampleNormsSq(chunk, normsSq, losses); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < chunk.N; i++ {
				var n2 float64
				for g := 0; g < k; g++ {
					n2 += normsSq[i*k+g]
				}
				f := float32(math.Min(1, clipC/math.Sqrt(n2)))
				for g := 0; g < k; g++ {
					scales[i*k+g] = f
				}
			}
			if step == 0 && lo == 0 {
				checkClippedSums(t, m, chunk, scales, grads, losses)
				if err := m.PerSampleNormsSq(chunk, normsSq, losses); err != nil { // re-retain the chunk
					t.Fatal(err)
				}
			}
			if err := m.AccumulateScaled(scales[:chunk.N*k], sum); err != nil {
				t.Fatal(err)
			}
		}
		noise.AddNormal(sum, sigma*clipC)
		p := m.Params()
		for j := range p {
			p[j] -= lr * sum[j] / (q * nTrain)
		}
	}
	loss1, correct, err := m.Evaluate(test)
	if err != nil {
		t.Fatal(err)
	}
	acc := float64(correct) / float64(test.N)
	bayes := 0
	for i := 0; i < test.N; i++ {
		best, bestD := 0, math.Inf(1)
		for c, mu := range means {
			var d2 float64
			for j, v := range mu {
				r := float64(test.X[i*dim+j]) - v
				d2 += r * r
			}
			if d2 < bestD {
				best, bestD = c, d2
			}
		}
		if best == test.Y[i] {
			bayes++
		}
	}
	bayesAcc := float64(bayes) / float64(test.N)
	t.Logf("test loss %.3f → %.3f, accuracy %.3f (Bayes %.3f)", loss0/float64(test.N), loss1/float64(test.N), acc, bayesAcc)
	if loss1 >= 0.7*loss0 {
		t.Errorf("test loss %.1f did not fall below 70%% of %.1f", loss1, loss0)
	}
	if acc < bayesAcc-0.05 {
		t.Errorf("accuracy %.3f more than 5 points below the Bayes accuracy %.3f", acc, bayesAcc)
	}
}

// checkClippedSums: the materialised path and the norms path must give the
// same clipped sum.
func checkClippedSums(t *testing.T, m *graph.Model, b models.Batch, scales, grads, losses []float32) {
	t.Helper()
	d, k := m.NumParams(), len(m.Groups())
	if err := m.PerSampleGrads(b, grads, losses); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, d)
	for i := 0; i < b.N; i++ {
		for j := 0; j < d; j++ {
			want[j] += float64(scales[i*k]) * float64(grads[i*d+j])
		}
	}
	if err := m.PerSampleNormsSq(b, make([]float64, b.N*k), losses); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, d)
	if err := m.AccumulateScaled(scales, got); err != nil {
		t.Fatal(err)
	}
	g64 := make([]float64, d)
	for j := range got {
		g64[j] = float64(got[j])
	}
	if e := relErr(g64, want); e > 1e-5 {
		t.Errorf("clipped sums differ between the two paths: relative error %.3g", e)
	}
}

// TestFloat32MatchesFloat64 checks the float32 Model against the float64 Net
// on the same parameters (relative error of float32 rounding).
func TestFloat32MatchesFloat64(t *testing.T) {
	for _, a := range []arch{archs()[4], archs()[7], archs()[9]} {
		t.Run(a.name, func(t *testing.T) {
			m, err := graph.NewModel(a.spec, a.batch, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			n64, err := graph.NewNet[float64](a.spec, a.batch, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer n64.Close()
			for i, v := range m.Params() {
				n64.Params()[i] = float64(v)
			}
			x, y, tg := data(a.spec, max(n64.Classes(), 2), a.batch, 3)
			d := m.NumParams()
			b := models.Batch{X: make([]float32, len(x)), Y: y, T: make([]float32, len(tg)), N: a.batch}
			for i, v := range x {
				b.X[i] = float32(v)
				x[i] = float64(b.X[i])
			}
			g32 := make([]float32, a.batch*d)
			if err := m.PerSampleGrads(b, g32, make([]float32, a.batch)); err != nil {
				t.Fatal(err)
			}
			g64 := make([]float64, a.batch*d)
			if err := n64.PerSampleGrads(x, y, tg, a.batch, g64, make([]float64, a.batch)); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < a.batch; i++ {
				got := make([]float64, d)
				for j := range got {
					got[j] = float64(g32[i*d+j])
				}
				if e := relErr(got, g64[i*d:(i+1)*d]); e > 1e-4 {
					t.Errorf("example %d: float32 relative error %.3g", i, e)
				}
			}
		})
	}
}

// TestModelEvaluateChunks: Evaluate over more than MaxBatch examples equals
// the per-example losses summed and the argmax accuracy counted by hand.
func TestModelEvaluateChunks(t *testing.T) {
	spec := linearSpec(5, 3, graph.SoftmaxCrossEntropy, true)
	m, err := graph.NewModel(spec, 4, 9)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := rng.New(1)
	means := [][]float64{{3, 0, 0, 0, 0}, {0, 3, 0, 0, 0}, {0, 0, 3, 0, 0}}
	b := mixture(s, means, 11)
	loss, correct, err := m.Evaluate(b)
	if err != nil {
		t.Fatal(err)
	}
	// By hand: z = W x + b with W out×in.
	p := m.Params()
	var wantLoss float64
	wantCorrect := 0
	for i := 0; i < b.N; i++ {
		z := make([]float64, 3)
		for o := 0; o < 3; o++ {
			z[o] = float64(p[15+o])
			for j := 0; j < 5; j++ {
				z[o] += float64(p[o*5+j]) * float64(b.X[i*5+j])
			}
		}
		mx := math.Max(z[0], math.Max(z[1], z[2]))
		var se float64
		best := 0
		for o, v := range z {
			se += math.Exp(v - mx)
			if v > z[best] {
				best = o
			}
		}
		wantLoss += mx + math.Log(se) - z[b.Y[i]]
		if best == b.Y[i] {
			wantCorrect++
		}
	}
	if math.Abs(loss-wantLoss) > 1e-5*math.Abs(wantLoss) || correct != wantCorrect {
		t.Errorf("Evaluate = (%.6f, %d), by hand (%.6f, %d)", loss, correct, wantLoss, wantCorrect)
	}
}

// TestModelErrors: bad input gives errors, never panics.
func TestModelErrors(t *testing.T) {
	m, err := graph.NewModel(linearSpec(3, 2, graph.SoftmaxCrossEntropy, true), 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, k := m.NumParams(), len(m.Groups())
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"label out of range", func() error {
			return m.PerSampleGrads(models.Batch{X: x, Y: []int{0, 2}, N: 2}, make([]float32, 2*d), make([]float32, 2))
		}, "label 2"},
		{"chunk too large", func() error {
			return m.PerSampleGrads(models.Batch{X: x, Y: []int{0, 1, 0}, N: 3}, make([]float32, 3*d), make([]float32, 3))
		}, "MaxBatch"},
		{"short X", func() error {
			return m.PerSampleNormsSq(models.Batch{X: x[:4], Y: []int{0, 1}, N: 2}, make([]float64, 2*k), make([]float32, 2))
		}, "input values"},
		{"accumulate without chunk", func() error {
			return m.AccumulateScaled(make([]float32, 2*k), make([]float32, d))
		}, "before PerSampleNormsSq"},
		{"short grads", func() error {
			return m.PerSampleGrads(models.Batch{X: x, Y: []int{0, 1}, N: 2}, make([]float32, d), make([]float32, 2))
		}, "grads has length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}

	sq, err := graph.NewModel(linearSpec(2, 1, graph.Squared, true), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	if err := sq.PerSampleGrads(models.Batch{X: []float32{1, 2}, T: []float32{float32(math.NaN())}, N: 1}, make([]float32, 3), make([]float32, 1)); err == nil {
		t.Error("NaN target accepted")
	}
	lg, err := graph.NewModel(linearSpec(2, 1, graph.Logistic, true), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	if err := lg.PerSampleGrads(models.Batch{X: []float32{1, 2}, Y: []int{2}, N: 1}, make([]float32, 3), make([]float32, 1)); err == nil {
		t.Error("logistic label 2 accepted")
	}
}

// TestSpecErrors: malformed specs are refused with errors.
func TestSpecErrors(t *testing.T) {
	cases := []struct {
		name string
		spec graph.Spec
		want string
	}{
		{"no input", graph.Spec{Build: func(b *graph.Builder, x *G.Node) *G.Node { return x }}, "no input shape"},
		{"no build", graph.Spec{Input: []int{3}}, "no Build"},
		{"no params", graph.Spec{Input: []int{3}, Build: func(b *graph.Builder, x *G.Node) *G.Node { return x }}, "no parameters"},
		{"duplicate name", graph.Spec{Input: []int{3}, Build: func(b *graph.Builder, x *G.Node) *G.Node {
			return b.Linear("a", b.Linear("a", x, 3, true), 2, true)
		}}, "used twice"},
		{"linear on image", graph.Spec{Input: []int{1, 4, 4}, Build: func(b *graph.Builder, x *G.Node) *G.Node {
			return b.Linear("a", x, 2, true)
		}}, "Flatten first"},
		{"groups", graph.Spec{Input: []int{3, 4, 4}, Build: func(b *graph.Builder, x *G.Node) *G.Node {
			return b.GroupNorm("g", x, 2, 1e-5)
		}}, "do not split"},
		{"logistic width", linearSpec(3, 2, graph.Logistic, true), "one output"},
		{"softmax width", linearSpec(3, 1, graph.SoftmaxCrossEntropy, true), "C ≥ 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := graph.NewModel(c.spec, 2, 1)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}
