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

// tanhSlice32 (the AVX2 kernel where the CPU has it, scalar for the tail)
// against tanh32, bit for bit: a dense grid, random bit patterns, and the
// edges (±0, ±tiny, ±clamp, ±Inf, NaN), at lengths with and without a tail.
func TestTanhSlice32Exact(t *testing.T) {
	atEachLevel(t, func(t *testing.T) {
		var x []float32
		for v := -12.0; v <= 12; v += 1e-4 {
			x = append(x, float32(v))
		}
		for _, v := range []float64{0, math.Copysign(0, -1), tanhTiny, -tanhTiny, tanhClamp, -tanhClamp, 1e-30, math.Inf(1), math.Inf(-1), 1e30} {
			x = append(x, float32(v), math.Nextafter32(float32(v), 1), math.Nextafter32(float32(v), -1))
		}
		r := uint32(12345)
		for range 100000 {
			r = r*1664525 + 1013904223
			x = append(x, math.Float32frombits(r))
		}
		for _, n := range []int{len(x), len(x) - 3, 7, 8, 9} {
			out := make([]float32, n)
			tanhSlice32(out, x[:n])
			for i, v := range x[:n] {
				want := tanh32(v)
				if math.Float32bits(out[i]) != math.Float32bits(want) && !(want != want && out[i] != out[i]) {
					t.Fatalf("n=%d: tanhSlice32(%v) = %v (%#x), tanh32 %v (%#x)", n, v, out[i], math.Float32bits(out[i]), want, math.Float32bits(want))
				}
			}
		}
		if tanhVec == nil {
			t.Log("no vector kernel on this CPU: compared the scalar loop with itself")
		}
	})
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
