// Package gemm is dptrain's float32 matrix multiply for the default, cgo-free
// build: Sgemm computes C = alpha·op(A)·op(B) + beta·C on row-major matrices
// with BLAS semantics.
//
// It follows the Goto/BLIS design: op(A) and op(B) are packed into contiguous
// panels sized for the L2 and L1 caches, and a register-tiled micro-kernel
// runs over them. On amd64 the micro-kernel is Go assembly (AVX-512 12×32 when
// the CPU has AVX512F, else AVX2+FMA 6×16), chosen at start-up with
// golang.org/x/sys/cpu; elsewhere, on older CPUs and under the purego build
// tag it is a portable Go kernel. Large products are split into tiles of C run
// by a fixed pool of GOMAXPROCS workers; packing buffers are pooled, so calls
// allocate nothing in steady state.
//
// It is not a BLAS: there is no float64, no complex and no level-1/2 routine,
// and results are not bit-identical across kernels or tilings (the order of
// the k-sums differs), only within float32 rounding of each other.
package gemm
