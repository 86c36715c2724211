package clip

import (
	"math"
	"slices"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

func TestOuterClip(t *testing.T) {
	s := rng.New(3)
	const eb, c = 12.5, 0.4 // bound on ‖sum‖: c·eb = 5
	for it := 0; it < 200; it++ {
		v := make([]float32, 50)
		s.FillNormal(v, math.Exp(s.Float64()*4-2))
		orig := slices.Clone(v)
		n0 := norm(orig)
		moved := OuterClip(v, eb, c)
		n := norm(v)
		if n > c*eb {
			t.Fatalf("outer-clipped sum has norm %.17g > %v", n, c*eb)
		}
		if n0 <= c*eb {
			if moved || !slices.Equal(v, orig) {
				t.Fatal("a sum inside the bound was changed")
			}
			continue
		}
		if !moved || n < c*eb*(1-1e-6) {
			t.Fatalf("sum of norm %v clipped to %v, want %v", n0, n, c*eb)
		}
		for j := range v {
			if math.Abs(float64(v[j])-float64(orig[j])*c*eb/n0) > 1e-6*math.Abs(float64(orig[j]))+1e-9 {
				t.Fatalf("direction changed at %d", j)
			}
		}
	}
}

func TestNoiseReproducible(t *testing.T) {
	g, _ := NewBlockGaussian([]int{5, 7}, []float64{1, 0.1})
	a, b := make([]float32, 12), make([]float32, 12)
	g.Add(a, rng.New(9))
	g.Add(b, rng.New(9))
	if !slices.Equal(a, b) {
		t.Error("same seed, different noise")
	}
	g.Add(b, rng.New(10))
	if slices.Equal(a, b) {
		t.Error("noise added nothing")
	}
}
