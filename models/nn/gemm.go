package nn

import (
	"fmt"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	fastgemm "github.com/dptrain/dptrain/internal/gemm"
)

// blasImpl is gonum's pure-Go BLAS: the float64 path (exact checks) and the
// float32 fallback. The float32 default is internal/gemm's packed assembly
// kernels (AVX-512/AVX2, about 9× gonum here), still cgo-free.
var blasImpl gonum.Implementation

// gonumF32 routes float32 products to gonum instead of internal/gemm.
var gonumF32 atomic.Bool

// SetGEMMBackend selects the float32 GEMM: "asm" (internal/gemm, the
// default) or "gonum". It exists so that benchmarks can measure both in one
// run; it is safe to call between steps, not during one.
func SetGEMMBackend(name string) error {
	switch name {
	case "asm":
		gonumF32.Store(false)
	case "gonum":
		gonumF32.Store(true)
	default:
		return fmt.Errorf("unknown GEMM backend %q (asm or gonum)", name)
	}
	return nil
}

// GEMMBackend names the float32 GEMM in use, with its kernels.
func GEMMBackend() string {
	if gonumF32.Load() {
		return "gonum"
	}
	return "asm:" + fastgemm.KernelName()
}

const (
	// gonum splits C into 64×64 blocks and starts a goroutine per block once
	// there are 4 or more blocks; a call with C at most 64×192 stays serial.
	tileRows, tileCols = 64, 192
	// parallelFlops is the m·n·k above which a product is left to gonum's
	// parallel path. Below it, goroutine start-up costs more than it saves
	// and allocates; the per-sample products of the conv layers are all
	// below it, which keeps the steady state allocation-free.
	parallelFlops = 1 << 22
)

// gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, where
// op(A) is m×k (A transposed when tA), op(B) is k×n and C is m×n. lda, ldb and
// ldc are the row strides of the stored matrices.
func gemm[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if a32, ok := any(a).([]float32); ok && !gonumF32.Load() {
		// internal/gemm is serial below its own threshold and allocation-free.
		fastgemm.Sgemm(tA, tB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
		return
	}
	if m*n*k >= parallelFlops || (m <= tileRows && n <= tileCols) {
		gemmCall(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	// Tile C so that every call is serial.
	for i := 0; i < m; i += tileRows {
		mi := min(tileRows, m-i)
		ai := a[i:]
		if !tA {
			ai = a[i*lda:]
		}
		for j := 0; j < n; j += tileCols {
			nj := min(tileCols, n-j)
			bj := b[j:]
			if tB {
				bj = b[j*ldb:]
			}
			gemmCall(tA, tB, mi, nj, k, alpha, ai, lda, bj, ldb, beta, c[i*ldc+j:], ldc)
		}
	}
}

func gemmCall[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
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
