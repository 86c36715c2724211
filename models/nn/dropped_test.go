package nn

import (
	"math"
	"testing"
)

// A dropped example (scale 0) whose input or output gradient is non-finite
// must contribute exactly nothing: the sum equals the sum over the kept
// examples alone, bit for bit, rather than 0·Inf = NaN.
func TestLinearAccumulateScaledSkipsDropped(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	cases := []struct {
		name   string
		x0, d0 float32 // input and output gradient of the dropped example
	}{
		{"inf input", inf, 1},
		{"nan gradient", 1, nan},
		{"huge input", 3e38, 3e38},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const in, out = 3, 2
			l := NewLinear[float32](in, out, true)
			if _, err := l.Build(Vec(in), 3); err != nil {
				t.Fatal(err)
			}
			l.Bind(make([]float32, l.NumParams()))
			x := []float32{c.x0, c.x0, c.x0, 0.5, -1, 2, 1.5, 0.25, -0.75}
			dz := []float32{c.d0, c.d0, 0.3, -0.7, 1.1, 0.9}
			l.x, l.dz = x, dz
			got := make([]float32, l.NumParams())
			l.AccumulateScaled(3, []float32{0, 0.5, 2}, 1, got)
			// Brute force over the kept examples 1 and 2 only.
			want := make([]float32, l.NumParams())
			for _, i := range []int{1, 2} {
				s := []float32{0, 0.5, 2}[i]
				for o := range out {
					g := s * dz[i*out+o]
					for k := range in {
						want[o*in+k] += g * x[i*in+k]
					}
					want[out*in+o] += g
				}
			}
			for j := range want {
				if math.IsNaN(float64(got[j])) || math.Abs(float64(got[j]-want[j])) > 1e-6 {
					t.Fatalf("param %d: got %v, want %v", j, got[j], want[j])
				}
			}
		})
	}
}
