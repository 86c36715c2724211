package benchmarks

import (
	"fmt"
	"testing"

	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/sampler"
)

// Kernel benchmarks; run once, e.g.
//
//	go test -run XXX -bench . -benchtime 5x ./benchmarks

const benchB = 64 // examples per op

// benchModels are the real models whose dimension and parameter groups the
// clip benchmarks use: D = 26,010 (MNIST CNN) and D = 272,474 (ResNet-20).
var benchModels = []models.Spec{{Arch: "mnistcnn"}, {Arch: "resnet20gn"}}

func BenchmarkClipSum(b *testing.B) {
	for _, spec := range benchModels {
		m, err := models.New(spec, models.Options{MaxBatch: 1, Seed: 1})
		if err != nil {
			b.Fatalf("model %s: %v", spec.Arch, err)
		}
		d, groups := m.NumParams(), m.Groups()
		for _, c := range Clips {
			b.Run(fmt.Sprintf("%s/D=%d", c, d), func(b *testing.B) {
				k, err := NewClipKernel(KernelConfig{Clip: c, D: d, Groups: groups, Chunk: benchB, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					k.Reset()
					k.ClipSum(benchB, nil)
				}
				b.ReportMetric(float64(b.N*benchB)/b.Elapsed().Seconds(), "samples/s")
			})
		}
	}
}

// BenchmarkSamplerNext draws one step's batch over n = 60,000 at the
// expected batch 256 (shuffling: the fixed batch 256, a new permutation
// every ⌊n/256⌋ steps); twice sampling also draws every selected example's
// coordinate mask (q2 = 0.5) over D = 26,010.
func BenchmarkSamplerNext(b *testing.B) {
	const (
		n  = 60000
		q  = 256.0 / n
		q2 = 0.5
		d  = 26010
	)
	b.Run("Poisson/n=60000", func(b *testing.B) {
		p, err := sampler.NewPoisson(n, q, rng.New(1))
		if err != nil {
			b.Fatal(err)
		}
		var idx []int
		total := 0
		for i := 0; i < b.N; i++ {
			idx = p.Next(idx)
			total += len(idx)
		}
		b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "samples/s")
	})
	b.Run("Shuffle/n=60000", func(b *testing.B) {
		sh, err := sampler.NewShuffle(n, 256, rng.New(1))
		if err != nil {
			b.Fatal(err)
		}
		var idx []int
		total := 0
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			idx = sh.Next(idx)
			total += len(idx)
		}
		b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "samples/s")
	})
	b.Run(fmt.Sprintf("TwiceWithMasks/n=60000/D=%d", d), func(b *testing.B) {
		t, err := sampler.NewTwice(n, d, q, q2, rng.New(1))
		if err != nil {
			b.Fatal(err)
		}
		masks := make([]*sampler.Mask, 0, 512)
		var idx []int
		total := 0
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			idx = t.Next(idx)
			for len(masks) < len(idx) {
				masks = append(masks, sampler.NewMask(d))
			}
			for _, m := range masks[:len(idx)] {
				t.FillMask(m)
			}
			total += len(idx)
		}
		b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "samples/s")
	})
}
