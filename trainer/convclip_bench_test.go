package trainer

import (
	"strings"
	"testing"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/internal/cputime"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/rng"
)

// randomImages is n random images of the given shape over 10 classes.
func randomImages(n int, shape []int, seed uint64) *datasets.Dataset {
	d := 1
	for _, s := range shape {
		d *= s
	}
	s := rng.New(seed)
	x, y := make([]float32, n*d), make([]int, n)
	for i := range x {
		x[i] = float32(s.Float64())
	}
	for i := range y {
		y[i] = int(s.Uint64() % 10)
	}
	return &datasets.Dataset{Name: "random", X: x, Y: y, Shape: shape, NumClasses: 10}
}

// convStepState is a set-up training state for whole-step benchmarks and
// path comparisons on a conv net.
func convStepState(tb testing.TB, model Model, twice bool, batch int, edits ...func(*Config)) *state {
	tb.Helper()
	shape := []int{1, 28, 28}
	if model != ModelCNN {
		shape = []int{3, 32, 32}
	}
	train := randomImages(20*batch, shape, 1)
	c := Default()
	c.Dataset, c.Model, c.BatchSize, c.MaxPhysicalBatch = InMemory, model, batch, 64
	c.Steps, c.Sigma, c.Epsilon, c.Seeded, c.Plots = 1000, 1, 0, true, false
	if twice {
		c.Sampler, c.Q2, c.Clip, c.ClipNorm = "twice", 0.5, mechanism.Clip("hybrid"), 1
	}
	for _, e := range edits {
		e(&c)
	}
	s := &state{cfg: c, opts: Options{Train: train, Test: train}}
	if err := s.setup(); err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkConvStep times whole training steps (sampling, gradients,
// clipping, noise, optimizer) of DP-SGD (Poisson, flat clip, continuous
// noise: the norm-only path), of the same with lattice noise (the layered lattice path: issue
// 42's lattice-against-continuous rows) and of twice sampling with hybrid
// clipping, continuous and lattice, reporting samples per CPU-second.
func BenchmarkConvStep(b *testing.B) {
	lat := func(c *Config) { c.Noise = NoiseLattice }
	for _, model := range []Model{ModelLogReg, ModelCNN, ModelResNet20} {
		for _, mode := range []string{"dpsgd", "lattice", "twice", "twice-lattice", "twice-materialised"} {
			b.Run(string(model)+"/"+mode, func(b *testing.B) {
				materialiseAlways = mode == "twice-materialised"
				defer func() { materialiseAlways = false }()
				edits := []func(*Config){func(c *Config) { c.Noise = NoiseContinuous }}
				if mode == "lattice" || mode == "twice-lattice" {
					edits = append(edits, lat)
				}
				s := convStepState(b, model, strings.HasPrefix(mode, "twice"), 64, edits...)
				if _, err := s.step(); err != nil {
					b.Fatal(err)
				}
				n := 0
				b.ResetTimer()
				c0 := cputime.Process()
				for range b.N {
					st, err := s.step()
					if err != nil {
						b.Fatal(err)
					}
					n += st.n
				}
				cpu := cputime.Process() - c0
				b.ReportMetric(float64(n)/cpu, "samples/cpu-s")
				b.ReportMetric(cpu/float64(b.N), "cpu-s/step")
			})
		}
	}
}

// BenchmarkConvChunk times the gradient strategy alone on one fixed chunk
// of 64 examples (forward, backward, per-sample norms, clipping and the
// masked sum; no sampling noise in the batch size), reporting CPU-seconds
// per chunk.
func BenchmarkConvChunk(b *testing.B) {
	for _, model := range []Model{ModelCNN, ModelResNet20} {
		for _, mode := range []string{"dpsgd", "twice", "twice-materialised"} {
			b.Run(string(model)+"/"+mode, func(b *testing.B) {
				materialiseAlways = mode == "twice-materialised"
				defer func() { materialiseAlways = false }()
				s := convStepState(b, model, mode != "dpsgd", 64, func(c *Config) { c.Noise = NoiseContinuous })
				idx := make([]int, 64)
				for i := range idx {
					idx[i] = 3 * i
				}
				sum := make([]float32, s.clipper.OutDim())
				var st stepStats
				if err := s.grad.chunk(idx, sum, &st); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				c0 := cputime.Process()
				for range b.N {
					if err := s.grad.chunk(idx, sum, &st); err != nil {
						b.Fatal(err)
					}
				}
				cpu := cputime.Process() - c0
				b.ReportMetric(cpu/float64(b.N), "cpu-s/chunk")
				b.ReportMetric(float64(64*b.N)/cpu, "samples/cpu-s")
			})
		}
	}
}
