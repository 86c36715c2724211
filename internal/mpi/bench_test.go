//go:build mpi

package mpi

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

var (
	benchOnce sync.Once
	benchComm Comm
	benchErr  error
)

// BenchmarkSumFloat32 times the all-reduce of a D-float32 gradient sum, the
// collective of every distributed step (docs/distributed.md). Run it alone,
// under mpirun, since MPI is initialised once per process and never
// finalised here:
//
//	go test -c -tags mpi -o mpi.test ./internal/mpi
//	mpirun -np 2 ./mpi.test -test.run '^$' -test.bench SumFloat32
func BenchmarkSumFloat32(b *testing.B) {
	benchOnce.Do(func() { benchComm, benchErr = Init() })
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	for _, d := range []int{1, 1 << 10, 7850, 1 << 16, 272474, 1 << 20} {
		b.Run(fmt.Sprintf("D=%d", d), func(b *testing.B) {
			buf := make([]float32, d)
			if err := benchComm.Barrier(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(4 * d))
			for b.Loop() {
				if err := benchComm.SumFloat32(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestMain finalises MPI after the benchmarks (TestCollectives finalises
// its own).
func TestMain(m *testing.M) {
	code := m.Run()
	if benchComm != nil {
		benchComm.Finalize()
	}
	os.Exit(code)
}
