//go:build openblas && cgo

package nn

import (
	"os"

	"github.com/dptrain/dptrain/internal/gemm/openblas"
)

// With -tags openblas, SetGEMMBackend("openblas") routes float32 products
// to the system's OpenBLAS (cblas_sgemm through gonum.org/v1/netlib).
//
// OpenBLAS runs on one thread unless OPENBLAS_NUM_THREADS is set: the engine
// already splits per-sample work over GOMAXPROCS workers, and when those
// workers call a multi-threaded OpenBLAS at once its threads contend (a
// ResNet-20 DP step took 8× the wall time and 11× the CPU time with
// OpenBLAS's default of one thread per core on 2 cores).
func init() {
	openblasSgemm = openblas.Sgemm
	openblasName = func() string { return "openblas:" + openblas.CoreName() }
	if os.Getenv("OPENBLAS_NUM_THREADS") == "" {
		openblas.SetNumThreads(1)
	}
}
