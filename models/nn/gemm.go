package nn

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// blasImpl is the BLAS every layer calls through gemm. It is the pure-Go
// gonum implementation, so the default build stays cgo-free; a faster kernel
// (OpenBLAS through gonum/netlib under a build tag) can replace this one
// function.
var blasImpl gonum.Implementation

// gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, where
// op(A) is m×k (A transposed when tA), op(B) is k×n and C is m×n. lda, ldb and
// ldc are the row strides of the stored matrices.
func gemm[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	ta, tb := blas.NoTrans, blas.NoTrans
	if tA {
		ta = blas.Trans
	}
	if tB {
		tb = blas.Trans
	}
	switch a := any(a).(type) {
	case []float32:
		blasImpl.Sgemm(ta, tb, m, n, k, float32(alpha), a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	case []float64:
		blasImpl.Dgemm(ta, tb, m, n, k, float64(alpha), a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	}
}
