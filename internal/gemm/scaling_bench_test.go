package gemm

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// BenchmarkCoreScaling runs independent cache-resident products (serial
// 128³ Sgemm, operands in each worker's own L2) on 1 and on 2 goroutines at
// once and reports the total GFLOP/s: what the machine's cores deliver
// together when memory plays no part. On a machine with two real cores the
// second figure is twice the first; on the virtual machines we run on it
// often is not (docs/architecture.md#two-cores), which caps every parallel
// speed-up. Run with GOMAXPROCS ≥ 2:
//
//	go test -run '^$' -bench CoreScaling -count 5 ./internal/gemm
func BenchmarkCoreScaling(b *testing.B) {
	const n, reps = 128, 64
	type buf struct{ a, bb, c []float32 }
	bufs := make([]buf, 2)
	rnd := rand.New(rand.NewPCG(5, 6))
	for i := range bufs {
		bufs[i] = buf{make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)}
		for j := range bufs[i].a {
			bufs[i].a[j], bufs[i].bb[j] = rnd.Float32(), rnd.Float32()
		}
	}
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("goroutines=%d", workers), func(b *testing.B) {
			work := func(w int) {
				x := bufs[w]
				for range reps {
					sgemm(nil, 1, false, false, n, n, n, 1, x.a, n, x.bb, n, 0, x.c, n)
				}
			}
			for w := range workers {
				work(w) // warm-up: packing arenas
			}
			b.ResetTimer()
			for range b.N {
				var wg sync.WaitGroup
				for w := range workers {
					wg.Go(func() { work(w) })
				}
				wg.Wait()
			}
			flops := 2 * float64(n*n*n) * reps * float64(workers*b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
