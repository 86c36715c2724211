package graph

import (
	// Gorgonia's tensor package refuses to start on Go ≥ 1.21 without this
	// acknowledgement; pinned in go.mod (see DESIGN.md).
	_ "go4.org/unsafe/assume-no-moving-gc"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// Float is the element type of a Net: float32 for training, float64 for the
// oracle comparisons.
type Float interface{ float32 | float64 }

var impl gonum.Implementation

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
