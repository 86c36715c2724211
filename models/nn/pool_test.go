package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestMaxPool2dBruteForce checks the max-pool outputs and argmaxes (first of
// ties, in window order) against a direct search, for the unrolled 2×2 path
// and the general loop, with many ties (values from a small set).
func TestMaxPool2dBruteForce(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ c, h, w, k, s int }{
		{2, 5, 6, 2, 1}, {3, 7, 7, 2, 2}, {1, 4, 9, 2, 3}, {2, 6, 5, 3, 1}, {1, 8, 8, 3, 2},
	} {
		l := NewMaxPool2d[float32](tc.k, tc.s)
		in := Shape{C: tc.c, H: tc.h, W: tc.w}
		out, err := l.Build(in, 3)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, 3*in.Size())
		for i := range x {
			x[i] = float32(rnd.IntN(4))
		}
		y := l.Forward(x, 3, true)
		for i := range 3 {
			xi := x[i*in.Size():]
			for c := range tc.c {
				for oh := range out.H {
					for ow := range out.W {
						best := -1
						for kh := range tc.k {
							for kw := range tc.k {
								j := c*tc.h*tc.w + (oh*tc.s+kh)*tc.w + ow*tc.s + kw
								if best < 0 || xi[j] > xi[best] {
									best = j
								}
							}
						}
						o := i*out.Size() + (c*out.H+oh)*out.W + ow
						if y[o] != xi[best] || l.arg[o] != int32(best) {
							t.Fatalf("%+v sample %d out %d: got %v at %d, want %v at %d", tc, i, o, y[o], l.arg[o], xi[best], best)
						}
					}
				}
			}
		}
	}
}

// BenchmarkMaxPool2 is the MNIST CNN's first pooling layer (2×2, stride 1,
// 16×14×14) on tanh-like values, where the maximum's position is random.
func BenchmarkMaxPool2(b *testing.B) {
	rnd := rand.New(rand.NewPCG(1, 2))
	l := NewMaxPool2d[float32](2, 1)
	in := Shape{C: 16, H: 14, W: 14}
	if _, err := l.Build(in, 64); err != nil {
		b.Fatal(err)
	}
	x := make([]float32, 64*in.Size())
	for i := range x {
		x[i] = float32(rnd.NormFloat64())
	}
	for _, train := range []bool{true, false} {
		b.Run(fmt.Sprintf("train=%v", train), func(b *testing.B) {
			for b.Loop() {
				l.Forward(x, 64, train)
			}
		})
	}
}

// Outside training the 2×2 stride-1 float32 pool takes its maxima without
// the argmax (sixteen or eight at a time with AVX-512 or AVX2): the same outputs as the training
// pass, for widths with and without a vector tail; and a Backward after
// such a pass (a gradient with SetTraining(false)) rebuilds the argmax and
// gives the training pass's input gradient.
func TestMaxPool2dInference(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	for _, w := range []int{2, 9, 14, 17, 30} {
		l := NewMaxPool2d[float32](2, 1)
		in := Shape{C: 3, H: 5, W: w}
		out, err := l.Build(in, 4)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float32, 4*in.Size())
		dy := make([]float32, 4*out.Size())
		for i := range x {
			x[i] = float32(rnd.IntN(5)) // ties
		}
		for i := range dy {
			dy[i] = float32(rnd.NormFloat64())
		}
		want := append([]float32(nil), l.Forward(x, 4, true)...)
		wantDx := append([]float32(nil), l.Backward(dy, 4, true)...)
		got := l.Forward(x, 4, false)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("W=%d out %d: inference %v, training %v", w, i, got[i], want[i])
			}
		}
		if l.noArg {
			clear(l.arg) // it must be rebuilt, not left from the training pass
		}
		dx := l.Backward(dy, 4, true)
		for i := range wantDx {
			if dx[i] != wantDx[i] {
				t.Fatalf("W=%d: dx[%d] after an inference pass %v, want %v", w, i, dx[i], wantDx[i])
			}
		}
	}
}
