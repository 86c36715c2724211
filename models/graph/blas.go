package graph

import (
	// Gorgonia's tensor package refuses to start on Go ≥ 1.21 without this
	// acknowledgement; pinned in go.mod (see
	// docs/architecture.md#gorgonia-pitfalls).
	_ "go4.org/unsafe/assume-no-moving-gc"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gorgonia.org/gorgonia"

	fastgemm "github.com/dptrain/dptrain/internal/gemm"
)

// Float is the element type of a Net: float32 for training, float64 for the
// oracle comparisons.
type Float interface{ float32 | float64 }

var impl fastBLAS

// fastBLAS is gonum's pure-Go BLAS with our float32 GEMM (AVX-512/AVX2
// kernels, two cores) in place of gonum's Sgemm: Gorgonia's MatMul and the
// per-sample rules of this package spend most of a step in Sgemm.
type fastBLAS struct{ gonum.Implementation }

// Sgemm is gonum's signature over our kernel (row-major, as gonum's).
func (fastBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	fastgemm.Sgemm(tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// The Gorgonia graphs this package builds, and any other in the process,
// use fastBLAS (gorgonia.Use also sets the tensor package's BLAS). A
// program that calls gorgonia.Use itself in main overrides this.
func init() { gorgonia.Use(fastBLAS{}) }

// UseGonumBLAS switches Gorgonia and this package back to gonum's
// pure-Go BLAS, or (false) to fastBLAS: for benchmarks and oracle tests.
func UseGonumBLAS(on bool) {
	if on {
		gorgonia.Use(gonum.Implementation{})
		gonumOnly = true
		return
	}
	gorgonia.Use(fastBLAS{})
	gonumOnly = false
}

var gonumOnly bool

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, where
// op(A) is m×k and op(B) is k×n.
func gemm[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	switch c := any(c).(type) {
	case []float64:
		impl.Dgemm(trans(tA), trans(tB), m, n, k, float64(alpha), any(a).([]float64), lda, any(b).([]float64), ldb, float64(beta), c, ldc)
	case []float32:
		if gonumOnly {
			impl.Implementation.Sgemm(trans(tA), trans(tB), m, n, k, float32(alpha), any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), c, ldc)
			return
		}
		impl.Sgemm(trans(tA), trans(tB), m, n, k, float32(alpha), any(a).([]float32), lda, any(b).([]float32), ldb, float32(beta), c, ldc)
	}
}

// sumSq returns Σ x² accumulated in float64.
func sumSq[T Float](x []T) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return s
}
