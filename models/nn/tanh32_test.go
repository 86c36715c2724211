package nn

import (
	"math"
	"testing"
)

// tanh32 against math.Tanh: relative error within 4 float32 ulps (2⁻²¹)
// everywhere on a dense grid, exact ±1 saturation and odd symmetry, and the
// identity near 0. NaN propagates.
func TestTanh32(t *testing.T) {
	const ulp = 1.0 / (1 << 23)
	worst := 0.0
	for _, r := range []struct{ lo, hi, step float64 }{
		{-1e-3, 1e-3, 1e-7}, {-2, 2, 1e-5}, {-12, 12, 3e-4}, {-100, 100, 0.37},
	} {
		for x := r.lo; x <= r.hi; x += r.step {
			x32 := float32(x)
			got := float64(tanh32(x32))
			want := math.Tanh(float64(x32))
			rel := math.Abs(got-want) / math.Max(math.Abs(want), 1e-30)
			worst = math.Max(worst, rel)
			if rel > 4*ulp {
				t.Fatalf("tanh32(%v) = %v, math.Tanh %v: relative error %.3g > 4 ulp", x32, got, want, rel)
			}
			if tanh32(-x32) != -tanh32(x32) {
				t.Fatalf("tanh32 not odd at %v", x32)
			}
		}
	}
	t.Logf("worst relative error %.3g (%.2f ulp)", worst, worst/ulp)
	for _, tc := range []struct{ x, want float32 }{{0, 0}, {1e-5, 1e-5}, {50, 1}, {-50, -1}, {float32(math.Inf(1)), 1}} {
		if got := tanh32(tc.x); got != tc.want {
			t.Errorf("tanh32(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
	if v := tanh32(float32(math.NaN())); v == v {
		t.Errorf("tanh32(NaN) = %v", v)
	}
}

func BenchmarkTanh(b *testing.B) {
	x := make([]float32, 4096)
	out := make([]float32, len(x))
	for i := range x {
		x[i] = float32(i-2048) / 512
	}
	b.Run("math", func(b *testing.B) {
		for b.Loop() {
			for i, v := range x {
				out[i] = tanh(v)
			}
		}
	})
	b.Run("tanh32", func(b *testing.B) {
		for b.Loop() {
			tanhSlice32(out, x)
		}
	})
}
