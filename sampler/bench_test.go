package sampler

import (
	"fmt"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// BenchmarkFillMask draws one example's coordinate mask at D ≈ 272k.
func BenchmarkFillMask(b *testing.B) {
	const d = 272474
	for _, q2 := range []float64{0.5, 1.0 / 3, 0.25, 0.05} {
		tw, _ := NewTwice(60000, d, 0.01, q2, rng.New(1))
		m := NewMask(d)
		b.Run(fmt.Sprintf("q2=%.3g", q2), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				tw.FillMask(m)
			}
			b.ReportMetric(float64(b.N)*d/b.Elapsed().Seconds(), "coords/s")
		})
	}
}

// BenchmarkPoissonNext: one step over MNIST-sized data at q = 256/60000.
func BenchmarkPoissonNext(b *testing.B) {
	p, _ := NewPoisson(60000, 256.0/60000, rng.New(1))
	var dst []int
	for i := 0; i < b.N; i++ {
		dst = p.Next(dst)
	}
}
