package nn

import (
	"fmt"
	"math"
	"testing"

	"github.com/dptrain/dptrain/internal/vec"
	"github.com/dptrain/dptrain/rng"
)

// elemInput is n float32 values drawn to cover what the passes meet:
// normal values of both signs, ±0, subnormals, ±Inf and NaN.
func elemInput(s *rng.Stream, n int) []float32 {
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-40, -1e-40, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3.5, -2.25}
	x := make([]float32, n)
	for i := range x {
		if s.Float64() < 0.2 {
			x[i] = special[int(s.Float64()*float64(len(special)))]
			continue
		}
		x[i] = float32(s.NormFloat64() * 3)
	}
	return x
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		g, w := got[i], want[i]
		if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
			t.Fatalf("%s[%d] = %v (%#x), Go loop gives %v (%#x)", what, i, g, math.Float32bits(g), w, math.Float32bits(w))
		}
	}
}

// TestElementwiseVectorPasses checks the vector ReLU and GroupNorm passes
// against the Go loops they replace, bit for bit (NaN as NaN), on every
// length up to 72 (AVX-512 part, AVX2 part and Go tail) and on special
// values, at each vector kernel set the CPU has.
func TestElementwiseVectorPasses(t *testing.T) {
	atEachLevel(t, func(t *testing.T) {
		s := rng.New(11)
		for n := 0; n <= 72; n++ {
			x, dy := elemInput(s, n), elemInput(s, n)
			// ReLU forward.
			y, want := make([]float32, n), make([]float32, n)
			j := reluFwdVec(y, x)
			for i := j; i < n; i++ {
				y[i] = max(x[i], 0)
			}
			for i := range want {
				want[i] = max(x[i], 0)
			}
			sameBits(t, "relu", y, want)
			// ReLU backward (out = max(x, 0), never −0).
			dx, wdx := make([]float32, n), make([]float32, n)
			reluBack32(dx, y, dy)
			for i := range wdx {
				if y[i] > 0 || y[i] != y[i] { // out's bits are non-zero
					wdx[i] = dy[i]
				}
			}
			sameBits(t, "reluBack", dx, wdx)
			// Tanh backward.
			tb, wtb := make([]float32, n), make([]float32, n)
			for i := tanhBackVec(tb, x, dy); i < n; i++ {
				tb[i] = dy[i] * (1 - float32(x[i]*x[i]))
			}
			for i := range wtb {
				wtb[i] = dy[i] * (1 - float32(x[i]*x[i]))
			}
			sameBits(t, "tanhBack", tb, wtb)
			// Residual add.
			sum, wsum := make([]float32, n), make([]float32, n)
			for i := addVec(sum, x, dy); i < n; i++ {
				sum[i] = x[i] + dy[i]
			}
			for i := range wsum {
				wsum[i] = x[i] + dy[i]
			}
			sameBits(t, "add", sum, wsum)
			// axpy.
			for _, a := range []float32{0, 1, -0.37, 3e5} {
				got, want := append([]float32(nil), dy...), append([]float32(nil), dy...)
				axpy(a, x, got)
				for i := range want {
					want[i] += float32(a * x[i])
				}
				sameBits(t, "axpy", got, want)
			}
			// GroupNorm normalisation and backward.
			for _, c := range []struct {
				mean, r   float64
				gm, bt, a float32
			}{{0.3, 1.7, 1, 0, 0.1}, {-2.5, 0.01, -0.75, 0.5, -3}, {1e3, 1e-3, 2, -1e-3, 0}} {
				xh, out := make([]float32, n), make([]float32, n)
				j := gnNormVec(xh, out, x, c.mean, c.r, c.gm, c.bt)
				for i := j; i < n; i++ {
					xh[i] = float32((float64(x[i]) - c.mean) * c.r)
					out[i] = float32(c.gm*xh[i]) + c.bt
				}
				wxh, wout := make([]float32, n), make([]float32, n)
				for i := range x {
					wxh[i] = float32((float64(x[i]) - c.mean) * c.r)
					wout[i] = float32(c.gm*wxh[i]) + c.bt
				}
				sameBits(t, "gn xhat", xh, wxh)
				sameBits(t, "gn out", out, wout)
				b := c.a * 0.5
				o := make([]float32, n)
				j = gnBackVec(o, dy, xh, c.gm, c.a, b)
				for i := j; i < n; i++ {
					o[i] = float32(c.gm*dy[i]) - c.a - float32(xh[i]*b)
				}
				for i := range wxh {
					wout[i] = float32(c.gm*dy[i]) - c.a - float32(wxh[i]*b)
				}
				sameBits(t, "gn dx", o, wout)
			}
		}
	})
}

// TestMaxPool2RowVector checks the vector 2×2 stride-1 pooling row (values
// and first-of-ties argmax) against the Go loop, on rows full of ties,
// signed zeros and NaNs, for every width up to 40.
func TestMaxPool2RowVector(t *testing.T) {
	atEachLevel(t, func(t *testing.T) {
		if maxPool2ArgVec == nil {
			t.Skip("no vector pooling in this build")
		}
		s := rng.New(12)
		vals := []float32{-1, 0, float32(math.Copysign(0, -1)), 1, 2, float32(math.NaN()), float32(math.Inf(-1))}
		for w := 2; w <= 56; w++ {
			for rep := range 20 {
				row := make([]float32, 2*w)
				for i := range row {
					if rep%2 == 0 {
						row[i] = vals[int(s.Float64()*float64(len(vals)))]
					} else {
						row[i] = float32(s.NormFloat64())
					}
				}
				r0 := int32(s.Float64() * 1000)
				y, a := make([]float32, w-1), make([]int32, w-1)
				wy, wa := make([]float32, w-1), make([]int32, w-1)
				maxPool2Row32(row, w, 1, y, a, r0)
				vec := maxPool2ArgVec
				maxPool2ArgVec = nil
				maxPool2Row32(row, w, 1, wy, wa, r0)
				maxPool2ArgVec = vec
				sameBits(t, fmt.Sprintf("pool w=%d", w), y, wy)
				for j := range wa {
					if a[j] != wa[j] {
						t.Fatalf("w=%d: argmax[%d] = %d, Go loop gives %d (window %v %v / %v %v)", w, j, a[j], wa[j], row[j], row[j+1], row[w+j], row[w+j+1])
					}
				}
			}
		}
	})
}

// TestSumSq4 checks the four-row sum of squares against vec.SumSquares
// row by row, bit for bit (NaN as NaN), for every length up to 70 (the
// kernel's multiple of 4 and the Go tail), row strides longer than the
// rows, and on special values: signed zeros, infinities, NaNs, and
// magnitudes whose squares overflow float32.
func TestSumSq4(t *testing.T) {
	atEachLevel(t, func(t *testing.T) {
		s := rng.New(14)
		vals := []float32{0, float32(math.Copysign(0, -1)), 1e30, -3e38, 1e-40, float32(math.Inf(1)), float32(math.NaN())}
		ran := false
		for n := 0; n <= 70; n++ {
			for rep := range 4 {
				stride := n + rep
				x := make([]float32, 4*stride+1)
				for i := range x {
					if rep == 3 && s.Float64() < 0.1 {
						x[i] = vals[int(s.Float64()*float64(len(vals)))]
					} else {
						x[i] = float32(s.NormFloat64() * math.Exp(3*s.NormFloat64()))
					}
				}
				var out [4]float64
				if !sumSq4(x, stride, n, &out) {
					continue
				}
				ran = true
				for r := range 4 {
					want := vec.SumSquares(x[r*stride : r*stride+n])
					if math.Float64bits(out[r]) != math.Float64bits(want) && !(out[r] != out[r] && want != want) {
						t.Fatalf("n=%d stride=%d row %d: %v, SumSquares gives %v", n, stride, r, out[r], want)
					}
				}
			}
		}
		if !ran && vecLevel >= vecAVX512 {
			t.Fatal("sumSq4 never ran at the AVX-512 level")
		}
		if !ran {
			t.Skip("no sumSq4 kernel at this level")
		}
	})
}
