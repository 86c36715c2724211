package features

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// The batched Stockham FFT against the O(n²) DFT sum, for lengths with
// every radix path (4, 2, 3, 5, generic 7, 11) and several batch widths.
func TestBatchFFTMatchesDFT(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 2, 3, 4, 5, 8, 10, 12, 20, 30, 32, 40, 49, 64, 66} {
		for _, B := range []int{1, 3} {
			for _, inverse := range []bool{false, true} {
				x := make([]complex128, n*B)
				for i := range x {
					x[i] = complex(r.NormFloat64(), r.NormFloat64())
				}
				got := append([]complex128{}, x...)
				newBatchFFT(n).transform(got, make([]complex128, n*B), B, inverse)
				sign := -1.0
				if inverse {
					sign = 1
				}
				for b := range B {
					for k := range n {
						var want complex128
						for j := range n {
							want += x[j*B+b] * cmplx.Rect(1, sign*2*math.Pi*float64(j*k%n)/float64(n))
						}
						if d := cmplx.Abs(got[k*B+b] - want); d > 1e-12*float64(n) {
							t.Fatalf("n=%d B=%d inverse=%v: X[%d] off by %g", n, B, inverse, k, d)
						}
					}
				}
			}
		}
	}
}
