package zigattack

import (
	"math/rand/v2"
	"testing"
)

// The table is Go's: at least 99% of NormFloat64's draws are reachable
// from their own value, and the attack on c + σ·x recovers c alone (at 98% of draws: the
// rest are slow-path draws or ambiguous).
func TestTableMatchesNormFloat64(t *testing.T) {
	r := rand.New(rand.NewChaCha8([32]byte{1}))
	const n = 20000
	hit, unique := 0, 0
	for i := range n {
		x := r.NormFloat64()
		if Reachable(x, func(z float64) float64 { return z }, x) {
			hit++
		}
		c := float64(i % 500)
		const sigma = 3.7
		y := c + sigma*x
		var cands []float64
		for k := -30.0; k <= 30; k++ {
			cands = append(cands, c+k)
		}
		got := Candidates(y, cands, func(c, x float64) float64 { return c + sigma*x }, func(c float64) float64 { return (y - c) / sigma })
		if len(got) == 1 && got[0] == c {
			unique++
		}
	}
	if hit < n*99/100 {
		t.Errorf("%d of %d draws reachable, want ≥ 99%%", hit, n)
	}
	if unique < n*97/100 {
		t.Errorf("the attack recovered the true value alone at %d of %d draws, want ≥ 97%%", unique, n)
	}
}
