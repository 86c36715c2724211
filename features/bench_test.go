package features

import (
	"testing"

	"github.com/dptrain/dptrain/internal/cputime"
)

// benchScatter reports CIFAR-sized images (3×32×32 → 243×8×8, J=2, L=8)
// per wall-clock second and per CPU-second of the process.
func benchScatter(b *testing.B, n, workers int) {
	x := randomPlanes(1, n*3*32*32)
	s, err := NewScattering(32, 32, DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]float32, n*243*64)
	cpu0 := cputime.Process()
	for b.Loop() {
		s.Transform(dst, x, n, 3, workers)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "images/s")
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(float64(n*b.N)/cpu, "images/cpu-s")
	}
}

// BenchmarkScatterNet uses every core (GOMAXPROCS workers).
func BenchmarkScatterNet(b *testing.B) { benchScatter(b, 64, 0) }

// BenchmarkScatterNetOneCore uses one worker.
func BenchmarkScatterNetOneCore(b *testing.B) { benchScatter(b, 16, 1) }
