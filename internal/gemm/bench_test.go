package gemm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dptrain/dptrain/internal/cputime"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// benchCase is a product as models/nn calls it.
type benchCase struct {
	m, n, k int
	tA, tB  bool
	what    string
}

// benchCases are square products and the engine's products at batch 256 and
// per sample (see models/nn: linear.go and conv.go).
var benchCases = []benchCase{
	{256, 256, 256, false, false, "square"},
	{512, 512, 512, false, false, "square"},
	{1024, 1024, 1024, false, false, "square"},
	{256, 10, 784, false, true, "logreg-fwd"},   // X·Wᵀ
	{256, 784, 10, false, false, "logreg-dx"},   // dZ·W
	{10, 784, 256, true, false, "logreg-dW"},    // dZᵀ·X
	{256, 256, 784, false, true, "mlp-fwd"},     // 784→256
	{256, 784, 256, false, false, "mlp-dx"},     //
	{256, 784, 256, true, false, "mlp-dW"},      //
	{16, 169, 64, false, false, "cnn1-fwd"},     // 16 filters 8×8, 13×13 out
	{64, 169, 16, true, false, "cnn1-dx"},       //
	{16, 64, 169, false, true, "cnn1-dW"},       // per-sample weight gradient
	{32, 25, 256, false, false, "cnn2-fwd"},     // 32 filters 4×4 over 16
	{32, 256, 25, false, true, "cnn2-dW"},       //
	{16, 1024, 144, false, false, "resnet-fwd"}, // 3×3 conv, 16 channels, 32×32
	{16, 144, 1024, false, true, "resnet-dW"},   //
}

// BenchmarkSgemm runs every kernel single-threaded, Sgemm's own kernel
// choice single-threaded and as called (all cores for large products), and
// gonum's pure-Go blas32.Gemm (parallel for large products) on the same
// operands, so the ratios come from one run.
func BenchmarkSgemm(b *testing.B) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, bc := range benchCases {
		m, n, k, tA, tB := bc.m, bc.n, bc.k, bc.tA, bc.tB
		a, bm, c, lda, ldb := bc.operands(rnd)
		// run reports GFLOP/s of wall time and GFLOP per CPU-second: on a
		// loaded machine the second is the stable one for serial runs; for
		// parallel runs their ratio is the cores kept busy.
		run := func(b *testing.B, f func()) {
			cpu0 := cputime.Process()
			for b.Loop() {
				f()
			}
			gflop := 2 * float64(m) * float64(n) * float64(k) * float64(b.N) / 1e9
			b.ReportMetric(gflop/b.Elapsed().Seconds(), "GFLOP/s")
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(gflop/cpu, "GFLOP/cpu-s")
			}
		}
		name := bc.name()
		for _, kern := range kernels() {
			if kern.dot != nil && (tA || !tB) {
				continue // dot kernels only compute A·Bᵀ
			}
			b.Run(name+"/"+kern.name+"-serial", func(b *testing.B) {
				run(b, func() { sgemm(kern, 1, tA, tB, m, n, k, 1, a, lda, bm, ldb, 0, c, n) })
			})
		}
		b.Run(name+"/Sgemm-serial", func(b *testing.B) {
			run(b, func() { sgemm(nil, 1, tA, tB, m, n, k, 1, a, lda, bm, ldb, 0, c, n) })
		})
		b.Run(name+"/Sgemm", func(b *testing.B) {
			run(b, func() { Sgemm(tA, tB, m, n, k, 1, a, lda, bm, ldb, 0, c, n) })
		})
		b.Run(name+"/gonum-blas32", func(b *testing.B) {
			ga := blas32.General{Rows: m, Cols: k, Stride: lda, Data: a}
			ta := blas.NoTrans
			if tA {
				ga.Rows, ga.Cols, ta = k, m, blas.Trans
			}
			gb := blas32.General{Rows: k, Cols: n, Stride: ldb, Data: bm}
			tb := blas.NoTrans
			if tB {
				gb.Rows, gb.Cols, tb = n, k, blas.Trans
			}
			gc := blas32.General{Rows: m, Cols: n, Stride: n, Data: c}
			run(b, func() { blas32.Gemm(ta, tb, 1, ga, gb, 0, gc) })
		})
	}
}

// operands returns random A and B for the case, a C to write, and the
// leading dimensions of A and B for its transposes.
func (bc benchCase) operands(rnd *rand.Rand) (a, b, c []float32, lda, ldb int) {
	m, n, k := bc.m, bc.n, bc.k
	lda, ldb = k, n
	if bc.tA {
		lda = m
	}
	if bc.tB {
		ldb = k
	}
	a, b, c = make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	for i := range a {
		a[i] = rnd.Float32()
	}
	for i := range b {
		b[i] = rnd.Float32()
	}
	return a, b, c, lda, ldb
}

// name is the sub-benchmark name: what-MxNxK-transposes.
func (bc benchCase) name() string {
	t := map[[2]bool]string{{false, false}: "NN", {true, false}: "TN", {false, true}: "NT", {true, true}: "TT"}[[2]bool{bc.tA, bc.tB}]
	return fmt.Sprintf("%s-%dx%dx%d-%s", bc.what, bc.m, bc.n, bc.k, t)
}
