package nn

import (
	"fmt"
	"strings"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	fastgemm "github.com/dptrain/dptrain/internal/gemm"
)

// blasImpl is gonum's pure-Go BLAS: the float64 path (exact checks) and the
// float32 fallback. The float32 default is internal/gemm's packed assembly
// kernels (AVX-512/AVX2, about 9× gonum here), still cgo-free.
var blasImpl gonum.Implementation

// Float32 GEMM backends, as stored in f32Backend.
const (
	backendASM      int32 = iota // internal/gemm, the default
	backendGonum                 // gonum's pure-Go blas32
	backendOpenBLAS              // OpenBLAS via cgo, only with -tags openblas
)

// f32Backend selects the float32 GEMM; float64 always runs on gonum.
var f32Backend atomic.Int32

// openblasSgemm and openblasName are set by gemm_openblas.go, which is built
// only with -tags openblas (and cgo); nil otherwise.
var (
	openblasSgemm func(tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
	openblasName  func() string
)

// SetGEMMBackend selects the float32 GEMM: "asm" (internal/gemm, the
// default), "gonum" (gonum's pure-Go BLAS) or "openblas" (the system's
// OpenBLAS through cgo, only in builds with -tags openblas; otherwise an
// error). It exists so that benchmarks can measure the backends in one run;
// it is safe to call between steps, not during one.
func SetGEMMBackend(name string) error {
	switch name {
	case "asm":
		f32Backend.Store(backendASM)
	case "gonum":
		f32Backend.Store(backendGonum)
	case "openblas":
		if openblasSgemm == nil {
			return fmt.Errorf("GEMM backend \"openblas\" is not in this build: build with -tags openblas, with cgo enabled and OpenBLAS installed (Debian: apt-get install libopenblas-dev)")
		}
		f32Backend.Store(backendOpenBLAS)
	default:
		return fmt.Errorf("unknown GEMM backend %q (%s)", name, strings.Join(GEMMBackends(), ", "))
	}
	return nil
}

// GEMMBackends lists the float32 GEMM backends SetGEMMBackend accepts in
// this build: asm and gonum, and openblas with -tags openblas.
func GEMMBackends() []string {
	if openblasSgemm != nil {
		return []string{"asm", "gonum", "openblas"}
	}
	return []string{"asm", "gonum"}
}

// GEMMBackend names the float32 GEMM in use, with its kernels:
// "asm:<kernels>", "gonum" or "openblas:<OpenBLAS core>".
func GEMMBackend() string {
	switch f32Backend.Load() {
	case backendGonum:
		return "gonum"
	case backendOpenBLAS:
		return openblasName()
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
	if a32, ok := any(a).([]float32); ok {
		switch f32Backend.Load() {
		case backendASM:
			// internal/gemm is serial below its own threshold and allocation-free.
			fastgemm.Sgemm(tA, tB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
			return
		case backendOpenBLAS:
			// One OpenBLAS thread unless OPENBLAS_NUM_THREADS is set (see
			// gemm_openblas.go); the engine's workers parallelise.
			openblasSgemm(tA, tB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
			return
		}
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
