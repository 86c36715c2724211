// Package gemm is dptrain's float32 matrix multiply for the default, cgo-free
// build: Sgemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices
// with BLAS semantics (all four transpose combinations, any strides; with
// beta = 0, C is overwritten, NaN included).
//
// It follows the Goto/BLIS design: op(A) and op(B) are cut into panels sized
// for the L1 and L2 caches and a register-tiled micro-kernel runs over them.
// Panels are packed into contiguous buffers only when their layout needs it;
// a panel that already lies in memory as the kernel reads it is read in
// place. On amd64 the micro-kernels are Go assembly, chosen at start-up with
// golang.org/x/sys/cpu: AVX-512 12×32 and AVX2+FMA 6×16 outer-product kernels
// (Sgemm picks per product the one that wastes least on padding), and for
// A·Bᵀ, where both operands are contiguous along k, AVX-512 4×4 / AVX2 3×4
// dot-product kernels that need no packing at all. Elsewhere, on CPUs
// without AVX2 and under the purego build tag a portable Go 4×4 kernel runs.
//
// Products of 4M multiply-adds and more are split into tiles of C taken by
// a fixed pool of GOMAXPROCS goroutines (started on first use and kept);
// smaller ones run on the caller's goroutine. Packing buffers are kept in
// per-kernel free lists (not sync.Pools, which drop them at each GC), so
// calls allocate nothing in steady state. Sgemm is safe for concurrent use.
//
// SgemmBF16 is the same product on bfloat16-rounded operands with float32
// sums, for --precision bf16: AMX tiles (TDPBF16PS) where the CPU has
// AMX-BF16, else an AVX-512 BF16 12×32 kernel (VDPBF16PS) where the CPU
// has it (HasBF16), a portable Go kernel elsewhere. Its
// elements do not depend on the product's shape or tiling; its arithmetic
// and error bound are in docs/precision.md.
//
// It is not a BLAS: there is no float64, no complex and no level-1/2 routine,
// and results are not bit-identical across kernels or tilings (the order of
// the k-sums differs), only within float32 rounding of each other.
//
// The engine's other float32 backends are chosen with
// models/nn.SetGEMMBackend: "gonum" (gonum's pure-Go blas32, about 9× slower)
// and, only in builds with -tags openblas (cgo, and on Debian apt-get
// install libopenblas-dev), "openblas": the system's OpenBLAS through
// gonum.org/v1/netlib, in the subpackage openblas. On this machine's AVX-512
// cores OpenBLAS matches these kernels on large products, is faster on some
// of the engine's small per-sample ones and slower on others (see
// BenchmarkSgemmOpenBLAS, which reports the same metrics as BenchmarkSgemm).
package gemm
