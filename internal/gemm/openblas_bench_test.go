//go:build openblas && cgo

package gemm

import (
	"math/rand/v2"
	"testing"

	"github.com/dptrain/dptrain/internal/cputime"
	"github.com/dptrain/dptrain/internal/gemm/openblas"
)

// BenchmarkSgemmOpenBLAS runs OpenBLAS's cblas_sgemm (-tags openblas) on
// benchCases with the same operands, names and metrics as BenchmarkSgemm,
// so that
//
//	go test -tags openblas -run XXX -bench Sgemm ./internal/gemm
//
// compares asm, gonum and OpenBLAS in one run. openblas-serial is one
// OpenBLAS thread (compare Sgemm-serial); openblas is OPENBLAS_NUM_THREADS
// threads, one per core by default (compare Sgemm). GFLOP/cpu-s counts all
// threads, including OpenBLAS's idle threads spinning after a call.
func BenchmarkSgemmOpenBLAS(b *testing.B) {
	b.Logf("OpenBLAS %s, core %s, %d threads", openblas.Config(), openblas.CoreName(), openblas.NumThreads())
	threads := openblas.NumThreads()
	defer openblas.SetNumThreads(threads)
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, bc := range benchCases {
		m, n, k, tA, tB := bc.m, bc.n, bc.k, bc.tA, bc.tB
		a, bm, c, lda, ldb := bc.operands(rnd)
		name := bc.name()
		for _, nt := range []int{1, threads} {
			sub := name + "/openblas"
			if nt == 1 {
				sub += "-serial"
			}
			b.Run(sub, func(b *testing.B) {
				openblas.SetNumThreads(nt)
				cpu0 := cputime.Process()
				for b.Loop() {
					openblas.Sgemm(tA, tB, m, n, k, 1, a, lda, bm, ldb, 0, c, n)
				}
				gflop := 2 * float64(m) * float64(n) * float64(k) * float64(b.N) / 1e9
				b.ReportMetric(gflop/b.Elapsed().Seconds(), "GFLOP/s")
				if cpu := cputime.Process() - cpu0; cpu > 0 {
					b.ReportMetric(gflop/cpu, "GFLOP/cpu-s")
				}
			})
		}
	}
}
