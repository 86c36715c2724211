package nn

import (
	"fmt"
	"math"
	"testing"

	"github.com/dptrain/dptrain/internal/cputime"
	"github.com/dptrain/dptrain/rng"
)

// stepOutputs runs every per-sample entry point of a float32 network on one
// chunk and returns the results, concatenated.
func stepOutputs(t *testing.T, name string, n int) [][]float32 {
	t.Helper()
	net := build[float32](t, name, n, 3)
	s := rng.New(4)
	x := make([]float32, n*net.InputShape().Size())
	for i := range x {
		x[i] = float32(s.NormFloat64())
	}
	tg := Target[float32]{Y: labels(s, n, net.OutputShape().Size())}
	d, k := net.NumParams(), len(net.Groups())
	grads := make([]float32, n*d)
	losses := make([]float32, n)
	if err := net.PerSampleGrads(x, tg, n, grads, losses); err != nil {
		t.Fatal(err)
	}
	norms := make([]float64, n*k)
	if err := net.PerSampleNormsSq(x, tg, n, norms, losses); err != nil {
		t.Fatal(err)
	}
	scales := make([]float32, n*k)
	for i := range scales {
		scales[i] = float32(1 / (1 + math.Sqrt(norms[i])))
	}
	clipped := make([]float32, d)
	if err := net.AccumulateScaled(scales, clipped); err != nil {
		t.Fatal(err)
	}
	batch := make([]float32, d)
	if err := net.BatchGrad(x, tg, n, batch, losses); err != nil {
		t.Fatal(err)
	}
	nf := make([]float32, len(norms))
	for i, v := range norms {
		nf[i] = float32(v)
	}
	return [][]float32{grads, nf, clipped, batch, losses}
}

// TestWorkersBitIdentical checks that per-sample gradients, norms, the
// clipped sum and the batch gradient are bit-identical for 1, 2 and 3
// workers, with and without Conv2d's cache: reproducibility from a seed must
// not depend on the machine's core count.
func TestWorkersBitIdentical(t *testing.T) {
	oldMin, oldLimit, oldCache := minParallel, workerLimit, CacheLimit
	defer func() { minParallel, workerLimit, CacheLimit = oldMin, oldLimit, oldCache }()
	minParallel = 0
	for _, cache := range []int{oldCache, 0} {
		for _, name := range []string{"conv", "conv-pool", "groupnorm", "resblock-gn", "mlp-tanh"} {
			CacheLimit = cache
			workerLimit = 1
			want := stepOutputs(t, name, 11)
			for _, w := range []int{2, 3} {
				workerLimit = w
				got := stepOutputs(t, name, 11)
				for o := range want {
					for j := range want[o] {
						if math.Float32bits(got[o][j]) != math.Float32bits(want[o][j]) {
							t.Fatalf("%s cache=%d workers=%d: output %d[%d] = %g, 1 worker gives %g", name, cache, w, o, j, got[o][j], want[o][j])
						}
					}
				}
			}
		}
	}
}

// TestParallelStepAllocs checks that a step split over workers (every
// layer type of the residual test network) allocates nothing once built.
func TestParallelStepAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	oldMin, oldLimit := minParallel, workerLimit
	defer func() { minParallel, workerLimit = oldMin, oldLimit }()
	minParallel, workerLimit = 0, 2
	for _, name := range []string{"resblock-gn", "conv-pool", "mlp-tanh"} {
		net := build[float32](t, name, 6, 1)
		s := rng.New(2)
		x := make([]float32, 6*net.InputShape().Size())
		for i := range x {
			x[i] = float32(s.NormFloat64())
		}
		tg := Target[float32]{Y: labels(s, 6, net.OutputShape().Size())}
		k := len(net.Groups())
		norms, losses := make([]float64, 6*k), make([]float32, 6)
		scales, sum := make([]float32, 6*k), make([]float32, net.NumParams())
		for i := range scales {
			scales[i] = 0.5
		}
		allocs := testing.AllocsPerRun(5, func() {
			if err := net.PerSampleNormsSq(x, tg, 6, norms, losses); err != nil {
				t.Fatal(err)
			}
			if err := net.AccumulateScaled(scales, sum); err != nil {
				t.Fatal(err)
			}
			if err := net.BatchGrad(x, tg, 6, sum, losses); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 0 {
			t.Errorf("%s: %v allocations per step", name, allocs)
		}
	}
}

// BenchmarkParallelAffinity times a chain of memory-speed passes (copies)
// over a ResNet-sized chunk (64 samples × 16×32×32 floats, each pass reading
// what the previous one wrote, between two buffers that fit in the
// last-level cache), with the pool's home segments on and off, in one run:
// what keeping a sample on one core from layer to layer is worth
// (docs/architecture.md#two-cores). sample-passes/cpu-s is the figure to
// compare on a shared machine.
func BenchmarkParallelAffinity(b *testing.B) {
	const n, size, passes = 64, 16 * 32 * 32, 8
	bufs := make([][]float32, 2)
	for i := range bufs {
		bufs[i] = make([]float32, n*size)
	}
	for i := range bufs[0] {
		bufs[0][i] = float32(i%7) - 3
	}
	for _, on := range []bool{true, false} {
		b.Run(fmt.Sprintf("home=%v", on), func(b *testing.B) {
			defer func(v bool) { homeSegments = v }(homeSegments)
			homeSegments = on
			var src, dst []float32
			pass := func(_, lo, hi int) {
				copy(dst[lo*size:hi*size], src[lo*size:hi*size]) // at memory speed, not the ALU's
			}
			b.ResetTimer()
			cpu := cputime.Process()
			for range b.N {
				for p := range passes {
					src, dst = bufs[p%2], bufs[1-p%2]
					parallelFor(n, maxWorkers, n*size, pass)
				}
			}
			if c := cputime.Process() - cpu; c > 0 {
				b.ReportMetric(float64(n*passes*b.N)/c, "sample-passes/cpu-s")
			}
			b.ReportMetric(float64(n*passes*b.N)/b.Elapsed().Seconds(), "sample-passes/s")
		})
	}
}
