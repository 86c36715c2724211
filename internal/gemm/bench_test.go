package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// benchShapes are square products and the engine's products (see testShapes).
var benchShapes = []shape{
	{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024},
	{256, 10, 784}, {784, 10, 256}, // logistic regression forward, weight gradient
	{256, 256, 784}, {784, 256, 256}, // MLP 784→256 forward, weight gradient
	{16, 169, 64}, {32, 25, 256}, // CNN convs, one sample
	{16, 1024, 144}, {16, 144, 1024}, // ResNet 3×3 conv forward, weight gradient
}

// BenchmarkSgemm runs every kernel single-threaded, Sgemm's own kernel
// choice single-threaded and as called (all cores for large products), and
// gonum's pure-Go blas32.Gemm (parallel for large products) on the same
// operands, so the ratios come from one run.
func BenchmarkSgemm(b *testing.B) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, sh := range benchShapes {
		m, n, k := sh.m, sh.n, sh.k
		a, bm, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		for i := range a {
			a[i] = rnd.Float32()
		}
		for i := range bm {
			bm[i] = rnd.Float32()
		}
		// run reports GFLOP/s of wall time and GFLOP per CPU-second: on a
		// loaded machine the second is the stable one for serial runs; for
		// parallel runs their ratio is the cores kept busy.
		run := func(b *testing.B, f func()) {
			cpu0 := cpuSeconds()
			for b.Loop() {
				f()
			}
			gflop := 2 * float64(m) * float64(n) * float64(k) * float64(b.N) / 1e9
			b.ReportMetric(gflop/b.Elapsed().Seconds(), "GFLOP/s")
			if cpu := cpuSeconds() - cpu0; cpu > 0 {
				b.ReportMetric(gflop/cpu, "GFLOP/cpu-s")
			}
		}
		name := fmt.Sprintf("%dx%dx%d", m, n, k)
		for _, kern := range kernels() {
			b.Run(name+"/"+kern.name+"-serial", func(b *testing.B) {
				run(b, func() { sgemm(kern, 1, false, false, m, n, k, 1, a, k, bm, n, 0, c, n) })
			})
		}
		b.Run(name+"/Sgemm-serial", func(b *testing.B) {
			run(b, func() { sgemm(nil, 1, false, false, m, n, k, 1, a, k, bm, n, 0, c, n) })
		})
		b.Run(name+"/Sgemm", func(b *testing.B) {
			run(b, func() { Sgemm(false, false, m, n, k, 1, a, k, bm, n, 0, c, n) })
		})
		b.Run(name+"/gonum-blas32", func(b *testing.B) {
			ga := blas32.General{Rows: m, Cols: k, Stride: k, Data: a}
			gb := blas32.General{Rows: k, Cols: n, Stride: n, Data: bm}
			gc := blas32.General{Rows: m, Cols: n, Stride: n, Data: c}
			run(b, func() { blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, ga, gb, 0, gc) })
		})
	}
}
