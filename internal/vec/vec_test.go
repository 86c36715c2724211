package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// SumSquares against a float64 loop in the same lanes (bit for bit) and a
// plain loop (to rounding), at every remainder of the four lanes, for both
// element types.
func TestSumSquares(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 1000, 1003} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rnd.NormFloat64())
		}
		var lanes [4]float64
		plain := 0.0
		for i, v := range x {
			f := float64(v)
			plain += f * f
			if i < n&^3 {
				lanes[i%4] += f * f
			} else {
				lanes[0] += f * f
			}
		}
		want := (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
		if got := SumSquares(x); got != want || math.Abs(got-plain) > 1e-13*max(plain, 1) {
			t.Errorf("n=%d: SumSquares %v, want %v (plain loop %v)", n, got, want, plain)
		}
		x64 := make([]float64, n)
		for i, v := range x {
			x64[i] = float64(v)
		}
		if got := SumSquares(x64); got != want {
			t.Errorf("n=%d float64: SumSquares %v, want %v", n, got, want)
		}
	}
}
