package nn

import (
	"errors"
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
	backendBF16                  // internal/gemm's SgemmBF16: bfloat16 operands, float32 sums
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
// default), "gonum" (gonum's pure-Go BLAS), "openblas" (the system's
// OpenBLAS through cgo, only in builds with -tags openblas; otherwise an
// error) or "bf16" (internal/gemm's SgemmBF16: operands rounded to
// bfloat16, sums in float32, only on CPUs with AVX-512 BF16; otherwise an
// error; docs/precision.md). It exists so that benchmarks can measure the
// backends in one run and a run can choose its precision; it is
// process-wide, safe to call between steps, not during one.
func SetGEMMBackend(name string) error {
	switch name {
	case "bf16":
		if !fastgemm.HasBF16() {
			return ErrNoBF16
		}
		f32Backend.Store(backendBF16)
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

// ErrNoBF16 is SetGEMMBackend("bf16")'s refusal on a machine without the
// instructions.
var ErrNoBF16 = errors.New("bfloat16 products need a CPU with AVX-512 BF16 (avx512_bf16 in /proc/cpuinfo) and an amd64 build without the purego tag; this machine or build lacks them")

// BF16NormFactor ρ bounds how much the bf16 backend can grow a per-sample
// contribution beyond the norm computed for it on the norm-only path:
// a Linear layer's norm comes from its float32 factors and its sum from
// their bfloat16 roundings, each within 2⁻⁸ of each element, so a rank-one
// gradient's norm grows by at most (1+2⁻⁸)²; 2⁻²⁰ more covers the float32
// rounding of s·dz and of the sum's terms and the float64 norms. A run
// clips to C/ρ there (clip.WithNormMargin; docs/precision.md).
const BF16NormFactor = (1 + 0x1p-8) * (1 + 0x1p-8) * (1 + 0x1p-20)

// HasBF16 reports whether SetGEMMBackend("bf16") works here.
func HasBF16() bool { return fastgemm.HasBF16() }

// GEMMBackends lists the float32 GEMM backends SetGEMMBackend accepts in
// this build and on this CPU: asm and gonum, openblas with -tags openblas,
// and bf16 where the CPU has AVX-512 BF16.
func GEMMBackends() []string {
	bs := []string{"asm", "gonum"}
	if openblasSgemm != nil {
		bs = append(bs, "openblas")
	}
	if fastgemm.HasBF16() {
		bs = append(bs, "bf16")
	}
	return bs
}

// WithGEMMBackend selects the backend name as SetGEMMBackend does and
// returns a function that restores the backend in use before.
func WithGEMMBackend(name string) (restore func(), err error) {
	prev := f32Backend.Load()
	if err := SetGEMMBackend(name); err != nil {
		return nil, err
	}
	return func() { f32Backend.Store(prev) }, nil
}

// GEMMBackend names the float32 GEMM in use, with its kernels:
// "asm:<kernels>", "gonum", "openblas:<OpenBLAS core>" or "bf16:<kernel>".
func GEMMBackend() string {
	switch f32Backend.Load() {
	case backendGonum:
		return "gonum"
	case backendOpenBLAS:
		return openblasName()
	case backendBF16:
		return "bf16:" + fastgemm.BF16KernelName()
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
		case backendBF16:
			fastgemm.SgemmBF16(tA, tB, m, n, k, float32(alpha), a32, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
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
