package graph_test

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/models/graph"
	"github.com/dptrain/dptrain/rng"
)

// benchDPStep measures one DP-SGD step through the Gorgonia backend in
// float32: forward, backward, per-sample norms, flat clipping to 1, and the
// clipped sum. Compare with the table (Gorgonia graph + probes) in
// docs/architecture.md#measured-speed.
func benchDPStep(b *testing.B, spec graph.Spec, classes, batch int) {
	m, err := graph.NewModel(spec, batch, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	s := rng.New(1)
	in := m.InputSize()
	bt := models.Batch{X: make([]float32, batch*in), Y: make([]int, batch), N: batch}
	s.FillNormal(bt.X, 1)
	for i := range bt.Y {
		bt.Y[i] = s.IntN(classes)
	}
	k := len(m.Groups())
	normsSq := make([]float64, batch*k)
	scales := make([]float32, batch*k)
	losses := make([]float32, batch)
	sum := make([]float32, m.NumParams())
	b.ReportAllocs()
	for b.Loop() {
		if err := m.PerSampleNormsSq(bt, normsSq, losses); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < batch; i++ {
			var n2 float64
			for g := 0; g < k; g++ {
				n2 += normsSq[i*k+g]
			}
			f := float32(math.Min(1, 1/math.Sqrt(n2)))
			for g := 0; g < k; g++ {
				scales[i*k+g] = f
			}
		}
		clear(sum)
		if err := m.AccumulateScaled(scales, sum); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(batch*b.N)/b.Elapsed().Seconds(), "samples/s")
}

// blasVariants runs f with our GEMM behind Gorgonia (the default) and with
// gonum's pure-Go BLAS, as sub-benchmarks of one run, so their ratio is
// measured under the same load.
func blasVariants(b *testing.B, f func(b *testing.B)) {
	for _, gonumOnly := range []bool{false, true} {
		name := map[bool]string{false: "blas=ours", true: "blas=gonum"}[gonumOnly]
		b.Run(name, func(b *testing.B) {
			graph.UseGonumBLAS(gonumOnly)
			defer graph.UseGonumBLAS(false)
			f(b)
		})
	}
}

func BenchmarkGraphDPStepLogreg(b *testing.B) {
	blasVariants(b, func(b *testing.B) { benchDPStep(b, linearSpec(784, 10, graph.SoftmaxCrossEntropy, true), 10, 256) })
}

func BenchmarkGraphDPStepMLP(b *testing.B) {
	blasVariants(b, func(b *testing.B) { benchDPStep(b, mlpZooSpec(784, []int{256}, 10, "relu"), 10, 256) })
}

func BenchmarkGraphDPStepCNN(b *testing.B) {
	blasVariants(b, func(b *testing.B) { benchDPStep(b, mnistCNNSpec(), 10, 64) })
}
