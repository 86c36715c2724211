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

// The same for Conv2d: a dropped example with an infinite input and a NaN
// output gradient leaves the sum equal to that of the kept examples alone.
func TestConvAccumulateScaledSkipsDropped(t *testing.T) {
	inf := float32(math.Inf(1))
	in := Shape{C: 1, H: 4, W: 4}
	build := func(n int) *Conv2d[float32] {
		l := NewConv2d[float32](1, 2, 3, 1, 1, true)
		if _, err := l.Build(in, n); err != nil {
			t.Fatal(err)
		}
		p := make([]float32, l.NumParams())
		for j := range p {
			p[j] = 0.1 * float32(j%7-3)
		}
		l.Bind(p)
		return l
	}
	kept := make([]float32, 2*16)
	for j := range kept {
		kept[j] = float32(j%5) - 1.5
	}
	x := append(make([]float32, 16), kept...)
	for j := range 16 {
		x[j] = inf
	}
	run := func(l *Conv2d[float32], x []float32, n int, scales []float32) []float32 {
		l.Forward(x, n, true)
		dy := make([]float32, n*2*16)
		for j := range dy {
			dy[j] = float32(j%3) - 0.5
		}
		if n == 3 {
			dy = append(make([]float32, 2*16), dy[:2*2*16]...)
			for j := range 2 * 16 {
				dy[j] = float32(math.NaN())
			}
		}
		l.Backward(dy, n, false)
		sum := make([]float32, l.NumParams())
		l.AccumulateScaled(n, scales, 1, sum)
		return sum
	}
	got := run(build(3), x, 3, []float32{0, 0.5, 2})
	want := run(build(2), kept, 2, []float32{0.5, 2})
	for j := range want {
		if math.IsNaN(float64(got[j])) || math.Abs(float64(got[j]-want[j])) > 1e-5 {
			t.Fatalf("param %d: got %v, want %v", j, got[j], want[j])
		}
	}
}
