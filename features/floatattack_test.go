package features

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/internal/zigattack"
	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/rng"
)

// The floating-point attack of issue 37 (HIGH 2, internal/zigattack) on the
// private channel statistics' noisy sums: an attacker who knows every
// example but the last asks whether each released coordinate can come from
// the sum with it or without it by a NormFloat64 draw. The old release
// (float sum + σ·Clip·NormFloat64(), its formula copied here) singles out
// the truth; the exact release is γ times an integer, which the exact
// sampler reaches from either sum, and the float attack finds neither.
func TestChannelStatsResistFloatAttack(t *testing.T) {
	shape := []int{3, 2, 2}
	const n, clip, sigma, releases = 30, 0.8, 1.7, 30
	w := []float64{1, 3, 0.2}
	gamma := math.Ldexp(clip, -lattice.SumExponent(n))
	recovered, total := 0, 0
	for r := range releases {
		x := randomPlanes(uint64(20+r), n*12)
		y, err := clippedSums(x, n, shape, w, clip, sigma, rng.New(uint64(500+r)))
		if err != nil {
			t.Fatal(err)
		}
		with, without := oldClippedSums(x, n, shape, w, clip), oldClippedSums(x[:(n-1)*12], n-1, shape, w, clip)
		old := rng.New(uint64(600 + r))
		std := sigma * clip
		rel := func(c, x float64) float64 { return c + std*x }
		for k := range y {
			oldY := with[k] + std*old.NormFloat64() // the release before the fix
			cands := []float64{with[k], without[k]}
			if got := zigattack.Candidates(oldY, cands, rel, func(c float64) float64 { return (oldY - c) / std }); len(got) == 1 && got[0] == with[k] {
				recovered++
			}
			total++
			if m := math.Round(y[k] / gamma); m*gamma != y[k] {
				t.Fatalf("release %v is not on the lattice of step %v", y[k], gamma)
			}
			if got := zigattack.Candidates(y[k], cands, rel, func(c float64) float64 { return (y[k] - c) / std }); len(got) == 1 {
				t.Fatalf("the float attack singles out %v from the exact release %v", got[0], y[k])
			}
		}
	}
	t.Logf("old release: the example's presence recovered at %d of %d released sums", recovered, total)
	if recovered < total*95/100 {
		t.Fatalf("the attack recovered the old release at %d of %d sums; it has lost its teeth", recovered, total)
	}
}

// oldClippedSums is the float sum the release made before the fix.
func oldClippedSums(x []float32, n int, shape []int, w []float64, clip float64) []float64 {
	c, hw := shape[0], shape[1]*shape[2]
	sum := make([]float64, 2*c)
	z := make([]float64, 2*c)
	for i := range n {
		var norm2 float64
		for ch := range c {
			var s, ss float64
			for _, v := range x[(i*c+ch)*hw : (i*c+ch+1)*hw] {
				s += float64(v)
				ss += float64(v) * float64(v)
			}
			z[ch] = w[ch] * s / float64(hw)
			z[c+ch] = w[ch] * w[ch] * ss / float64(hw)
			norm2 += z[ch]*z[ch] + z[c+ch]*z[c+ch]
		}
		f := 1.0
		if norm := math.Sqrt(norm2); norm > clip {
			f = clip / norm
		}
		for k := range z {
			sum[k] += f * z[k]
		}
	}
	return sum
}
