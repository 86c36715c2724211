//go:build openblas && cgo

package openblas

/*
#cgo LDFLAGS: -lopenblas
// Declared here rather than by including OpenBLAS's headers, whose location
// differs between distributions.
char *openblas_get_corename(void);
char *openblas_get_config(void);
int openblas_get_num_threads(void);
void openblas_set_num_threads(int);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

var impl netlib.Implementation

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32
// matrices with cblas_sgemm; the arguments are internal/gemm.Sgemm's. Like
// it, Sgemm panics on bad shapes (netlib checks them before the cgo call).
// It is safe for concurrent use with distinct C.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	ta, tb := blas.NoTrans, blas.NoTrans
	if transA {
		ta = blas.Trans
	}
	if transB {
		tb = blas.Trans
	}
	impl.Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// CoreName is the kernel set OpenBLAS chose for this CPU, e.g. "SkylakeX".
func CoreName() string { return C.GoString(C.openblas_get_corename()) }

// Config is OpenBLAS's build description (version, DYNAMIC_ARCH, MAX_THREADS…).
func Config() string { return C.GoString(C.openblas_get_config()) }

// NumThreads is the number of threads OpenBLAS may use for one call.
func NumThreads() int { return int(C.openblas_get_num_threads()) }

// SetNumThreads sets the number of threads OpenBLAS may use for one call;
// it must not be called while a product runs.
func SetNumThreads(n int) { C.openblas_set_num_threads(C.int(n)) }
