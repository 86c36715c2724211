// Package openblas is the float32 GEMM of the optional openblas build tag:
// Sgemm, with internal/gemm.Sgemm's signature, runs cblas_sgemm of the
// system's OpenBLAS through gonum.org/v1/netlib's cgo bindings.
//
// Everything but this comment is built only with -tags openblas and cgo
// enabled; it links -lopenblas itself, so no CGO_LDFLAGS are needed (on
// Debian: apt-get install libopenblas-dev). The default build of dptrain
// stays cgo-free and does not import this package's code.
//
// OpenBLAS runs large products on its own threads, OPENBLAS_NUM_THREADS of
// them (default: one per core); SetNumThreads changes the count at run time.
// Its idle threads spin for a while after a call, which shows up as CPU time.
// models/nn sets one thread unless OPENBLAS_NUM_THREADS is set, because its
// workers call Sgemm concurrently and a multi-threaded OpenBLAS then
// contends with itself.
package openblas
