package clip

import "math"

// OuterClip rescales a clipped sum so that the mean it stands for,
// sum/expectedBatch, has L2 norm at most c: the "outer-clip" step of
// docs/hidden-state.md#the-outer-clip, which keeps the hidden-state
// bounded-update assumption (‖update‖ ≤ ηC) when the mean is taken over the
// EXPECTED batch size. Apply it before the noise. Projection onto a ball is
// 1-Lipschitz, so the per-example sensitivity of the sum is unchanged. It
// reports whether the sum was scaled.
func OuterClip(sum []float32, expectedBatch, c float64) bool {
	if !(expectedBatch > 0) || !(c > 0) {
		panic("clip: OuterClip needs a positive expected batch and clip norm")
	}
	s := l2Scale(SumSquares(sum), c*expectedBatch)
	if s == 1 {
		return false
	}
	if s == 0 { // non-finite sum: drop it (zero is inside every ball)
		clear(sum)
		return true
	}
	for j, v := range sum {
		sum[j] = s * v
	}
	// float32 rounding can leave the norm a hair above the bound.
	for it := 0; it < 8 && math.Sqrt(SumSquares(sum)) > c*expectedBatch; it++ {
		for j, v := range sum {
			sum[j] = v * (1 - 0x1p-22)
		}
	}
	return true
}
