package lattice

import (
	"fmt"
	"testing"

	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/internal/cputime"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/rng"
)

// adder is the noise's signature in the trainer today: the lattice Noise
// and clip.Gaussian can stand for each other.
type adder interface {
	Add(sum []float32, r *rng.Stream)
	Len() int
}

var _, _ adder = (*Noise)(nil), (*clip.Gaussian)(nil)

// perCoord reports the wall and CPU time per coordinate of one b.N loop
// over d, given the CPU seconds at the loop's start.
func perCoord(b *testing.B, d int, cpu0 float64) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(d), "ns/coord")
	b.ReportMetric((cputime.Process()-cpu0)*1e9/float64(b.N)/float64(d), "cpu-ns/coord")
}

// BenchmarkNoise compares one noise draw over d coordinates: today's
// continuous sampler (clip.Gaussian.Add, ziggurat normals into a float32
// sum) against the lattice release (exact round(Z) added to an int64 sum,
// then γ·(S + round(Z)) into float32).
func BenchmarkNoise(b *testing.B) {
	for _, d := range []int{10_000, 100_000, 300_000} {
		b.Run(fmt.Sprintf("d=%d/continuous", d), func(b *testing.B) {
			g, err := clip.NewIsotropic(d, 1)
			if err != nil {
				b.Fatal(err)
			}
			sum, r := make([]float32, d), rng.New(1)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.Process()
			for range b.N {
				g.Add(sum, r)
			}
			perCoord(b, d, cpu0)
		})
		b.Run(fmt.Sprintf("d=%d/lattice", d), func(b *testing.B) {
			nz, err := New(1, 1, d, DefaultK)
			if err != nil {
				b.Fatal(err)
			}
			acc, out, r := make([]int64, d), make([]float32, d), rng.New(1)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.Process()
			for range b.N {
				clear(acc)
				if err := nz.Release(acc, out, r); err != nil {
					b.Fatal(err)
				}
			}
			perCoord(b, d, cpu0)
		})
	}
}

// BenchmarkQuantize compares one example's contribution to the sum: flat
// L2 clipping and a float32 scaled add (clip.L2.ClipSum of one row) against
// Quantize (the same norm, then truncation into int64).
func BenchmarkQuantize(b *testing.B) {
	for _, d := range []int{10_000, 100_000, 300_000} {
		x := make([]float32, d)
		rng.New(2).FillNormal(x, 0.01)
		b.Run(fmt.Sprintf("d=%d/float", d), func(b *testing.B) {
			l, err := clip.NewL2(1, d, nil)
			if err != nil {
				b.Fatal(err)
			}
			sum := make([]float32, d)
			b.ResetTimer()
			cpu0 := cputime.Process()
			for range b.N {
				l.ClipSum(x, 1, nil, sum)
			}
			perCoord(b, d, cpu0)
		})
		b.Run(fmt.Sprintf("d=%d/lattice", d), func(b *testing.B) {
			nz, err := New(1, 1, d, DefaultK)
			if err != nil {
				b.Fatal(err)
			}
			acc := make([]int64, d)
			b.ResetTimer()
			cpu0 := cputime.Process()
			for range b.N {
				nz.Quantize(x, acc)
			}
			perCoord(b, d, cpu0)
		})
	}
}

// BenchmarkStep times a full DP-SGD step (gradients, clipping, sum, noise
// and an SGD update) of three models both ways: today's path (norm-only
// clipped sum, continuous noise) and the lattice path, which needs each
// example's gradient (models.Chunker.Each) to quantise it, then Release.
// The models and batches are those of models' DPStep benchmarks.
func BenchmarkStep(b *testing.B) {
	for _, tc := range []struct {
		name  string
		batch int
		build func() (*models.Net, error)
	}{
		{"logreg", 256, func() (*models.Net, error) {
			return models.NewLogisticRegression(784, 10, models.Options{MaxBatch: 256, Seed: 1})
		}},
		{"cnn", 64, func() (*models.Net, error) { return models.NewMNISTCNN(models.Options{MaxBatch: 64, Seed: 1}) }},
		{"resnet20", 64, func() (*models.Net, error) { return models.NewResNet20GN(10, models.Options{MaxBatch: 64, Seed: 1}) }},
	} {
		m, err := tc.build()
		if err != nil {
			b.Fatal(err)
		}
		d := m.NumParams()
		s := rng.New(3)
		x := models.Batch{X: make([]float32, tc.batch*m.InputSize()), Y: make([]int, tc.batch), T: make([]float32, tc.batch), N: tc.batch}
		s.FillNormal(x.X, 1)
		for i := range x.Y {
			x.Y[i] = s.IntN(10)
		}
		ch := models.NewChunker(m)
		params, sum, losses := make([]float32, d), make([]float32, d), make([]float32, tc.batch)
		update := func() {
			for j, g := range sum {
				params[j] -= 1e-6 * g
			}
		}
		b.Run(tc.name+"/continuous", func(b *testing.B) {
			g, err := clip.NewIsotropic(d, 1)
			if err != nil {
				b.Fatal(err)
			}
			rule := models.FlatClip(1)
			step := func() {
				clear(sum)
				if err := ch.ClippedSum(x, rule, sum, losses); err != nil {
					b.Fatal(err)
				}
				g.Add(sum, s)
				update()
			}
			step()
			b.ResetTimer()
			cpu0 := cputime.Process()
			for range b.N {
				step()
			}
			b.ReportMetric((cputime.Process()-cpu0)*1e3/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(d), "params")
		})
		b.Run(tc.name+"/lattice", func(b *testing.B) {
			nz, err := New(1, 1, d, DefaultK)
			if err != nil {
				b.Fatal(err)
			}
			acc := make([]int64, d)
			each := func(_ int, c models.Batch, grads, _ []float32) error {
				for i := range c.N {
					nz.Quantize(grads[i*d:(i+1)*d], acc)
				}
				return nil
			}
			step := func() {
				clear(acc)
				if err := ch.Each(x, each); err != nil {
					b.Fatal(err)
				}
				if err := nz.Release(acc, sum, s); err != nil {
					b.Fatal(err)
				}
				update()
			}
			step()
			b.ResetTimer()
			cpu0 := cputime.Process()
			for range b.N {
				step()
			}
			b.ReportMetric((cputime.Process()-cpu0)*1e3/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(d), "params")
		})
	}
}

// BenchmarkSampler compares one draw of the noise at the lattice's usual
// scale (σ = 1, k = 40): the binned exact sampler, Karney's exact sampler
// it replaced, and rng's ziggurat NormFloat64 (the continuous noise's).
func BenchmarkSampler(b *testing.B) {
	const s = 0x1p40
	b.Run("binned", func(b *testing.B) {
		e, w, sc := newExactNormal(), newWords(rng.New(1).Blocks("bench")), binScaleOf(s)
		var acc int64
		for range b.N {
			acc += e.sample(sc, w)
		}
		sinkInt = acc
	})
	b.Run("karney", func(b *testing.B) {
		e, r, sc := newExactNormal(), rng.New(1), newScale(s)
		var acc int64
		for range b.N {
			acc += e.sampleKarney(sc, streamWords(r))
		}
		sinkInt = acc
	})
	b.Run("normfloat64", func(b *testing.B) {
		r := rng.New(1)
		var acc float64
		for range b.N {
			acc += r.NormFloat64()
		}
		sinkInt = int64(acc)
	})
}

var sinkInt int64
