package nn

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// TestGemm checks the tiled wrapper against a naive triple loop, for every
// transpose combination and sizes on both sides of the tiling thresholds.
func TestGemm(t *testing.T) {
	s := rng.New(1)
	for _, sz := range [][3]int{{3, 4, 5}, {70, 200, 3}, {130, 400, 9}, {65, 193, 1}, {1, 1000, 7}} {
		m, n, k := sz[0], sz[1], sz[2]
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				a, b := randn(s, m*k, 1), randn(s, k*n, 1)
				c := randn(s, m*n, 1)
				want := make([]float64, m*n)
				lda, ldb := k, n
				if tA {
					lda = m
				}
				if tB {
					ldb = k
				}
				for i := range m {
					for j := range n {
						var v float64
						for p := range k {
							var ai, bj float64
							if tA {
								ai = a[p*lda+i]
							} else {
								ai = a[i*lda+p]
							}
							if tB {
								bj = b[j*ldb+p]
							} else {
								bj = b[p*ldb+j]
							}
							v += ai * bj
						}
						want[i*n+j] = 0.5*v + 2*c[i*n+j]
					}
				}
				gemm(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 2, c, n)
				for j := range want {
					if math.Abs(c[j]-want[j]) > 1e-12*(1+math.Abs(want[j])) {
						t.Fatalf("%v tA=%v tB=%v: c[%d] = %v, want %v", sz, tA, tB, j, c[j], want[j])
					}
				}
			}
		}
	}
}
