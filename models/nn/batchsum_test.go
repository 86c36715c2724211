package nn

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// BatchGrad (Conv2d sums the batch's gradient in Backward, no cache) equals
// the sum of the per-sample gradients, in float64 to 1e-10, on the flip
// path with and without bias, a weight-standardised convolution, chunks
// that do and do not fill the accumulation blocks evenly, and with the
// cache on and off; and a DP step after it is unaffected.
func TestBatchGradSumsPerSample(t *testing.T) {
	oldLimit := CacheLimit
	defer func() { CacheLimit = oldLimit }()
	for _, cache := range []int{oldLimit, 0} {
		CacheLimit = cache
		for _, name := range []string{"conv-flip-ws", "resblock-gn", "conv-pool", "conv"} {
			for _, n := range []int{1, 5, 8, 13} {
				net := build[float64](t, name, 16, 3)
				s := rng.New(uint64(n))
				x := make([]float64, n*net.InputShape().Size())
				for i := range x {
					x[i] = s.NormFloat64()
				}
				tg := Target[float64]{Y: labels(s, n, net.OutputShape().Size())}
				d := net.NumParams()
				grads, losses := make([]float64, n*d), make([]float64, n)
				if err := net.PerSampleGrads(x, tg, n, grads, losses); err != nil {
					t.Fatal(err)
				}
				want := make([]float64, d)
				for i := range n {
					for j := range d {
						want[j] += grads[i*d+j]
					}
				}
				got := make([]float64, d)
				if err := net.BatchGrad(x, tg, n, got, losses); err != nil {
					t.Fatal(err)
				}
				tol := 1e-10 * max(maxAbs(want), 1)
				for j := range d {
					if math.Abs(got[j]-want[j]) > tol {
						t.Fatalf("%s cache=%d n=%d: batch grad[%d] (%s) = %.15g, Σ per-sample %.15g", name, cache, n, j, groupOf(net, j), got[j], want[j])
					}
				}
				// The per-sample path after a batch step still matches.
				again := make([]float64, n*d)
				if err := net.PerSampleGrads(x, tg, n, again, losses); err != nil {
					t.Fatal(err)
				}
				for j := range again {
					if again[j] != grads[j] {
						t.Fatalf("%s cache=%d n=%d: per-sample gradient %d changed after BatchGrad", name, cache, n, j)
					}
				}
			}
		}
	}
}
