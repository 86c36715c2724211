package accountant

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// geomSum against the sum in 200-bit arithmetic, over lengths that leave
// every tail (0..7 past a block of eight) and ratios from no decay to
// underflow within a few terms.
func TestGeomSumMatchesExact(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 100, 1001} {
		p := make([]float64, n)
		for i := range p {
			p[i] = rnd.Float64() * math.Exp(-20*rnd.Float64())
		}
		for _, r := range []float64{1, 0.999999, 0.99, 0.5, 1e-3, 1e-200, 1e-310} {
			for _, rev := range []bool{false, true} {
				want, f := new(big.Float).SetPrec(200), new(big.Float).SetPrec(200).SetFloat64(1)
				rb := new(big.Float).SetPrec(200).SetFloat64(r)
				for j := range n {
					v := p[j]
					if rev {
						v = p[n-1-j]
					}
					want.Add(want, new(big.Float).SetPrec(200).Mul(f, big.NewFloat(v)))
					f.Mul(f, rb)
				}
				w, _ := want.Float64()
				got := geomSum(p, r, rev)
				if math.Abs(got-w) > 1e-13*w+1e-300 {
					t.Errorf("n=%d r=%g reversed=%v: geomSum = %.17g, exact %.17g", n, r, rev, got, w)
				}
			}
		}
	}
}
