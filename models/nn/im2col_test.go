package nn

import (
	"fmt"
	"math"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// TestIm2colCol2im compares im2col and col2im with the definitions, entry
// by entry, over geometries that exercise every path: stride 1 with
// same-width output (one shifted copy), stride 1 without padding, strides
// 2 and 3 (the gather through the padded plane, with and without
// padding), kernels wider than the padding and padding wider than 1.
func TestIm2colCol2im(t *testing.T) {
	cases := []struct{ C, H, W, K, S, P int }{
		{2, 5, 5, 3, 1, 1}, {1, 4, 6, 3, 1, 1}, {3, 6, 5, 3, 1, 0}, {2, 7, 6, 3, 2, 1},
		{1, 28, 28, 8, 2, 3}, {2, 5, 7, 4, 3, 2}, {1, 3, 3, 1, 1, 0}, {2, 4, 4, 5, 1, 2},
		{1, 5, 5, 3, 1, 2}, {2, 6, 6, 1, 2, 0}, {3, 13, 13, 4, 2, 0},
	}
	s := rng.New(9)
	for _, c := range cases {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			g := newGeom(c.C, c.H, c.W, c.K, c.S, c.P)
			xp, dxp := make([]float64, g.padSize()), make([]float64, g.padSize())
			p := g.OH * g.OW
			x := make([]float64, c.C*c.H*c.W)
			for i := range x {
				x[i] = s.NormFloat64()
			}
			ld := p + 3 // a row stride longer than a row
			u := make([]float64, c.C*c.K*c.K*ld)
			for i := range u {
				u[i] = 99 // must be overwritten
			}
			// A first call on other data: xp is reused, as a worker's is.
			other := make([]float64, len(x))
			for i := range other {
				other[i] = s.NormFloat64()
			}
			im2col(&g, other, make([]float64, len(u)), ld, xp)
			im2col(&g, x, u, ld, xp)
			du := make([]float64, len(u))
			want := make([]float64, len(x))
			for ch := range c.C {
				for kh := range c.K {
					for kw := range c.K {
						r := (ch*c.K+kh)*c.K + kw
						for oh := range g.OH {
							for ow := range g.OW {
								ih, iw := oh*c.S-c.P+kh, ow*c.S-c.P+kw
								v, d := 0.0, s.NormFloat64()
								du[r*ld+oh*g.OW+ow] = d
								if ih >= 0 && ih < c.H && iw >= 0 && iw < c.W {
									v = x[(ch*c.H+ih)*c.W+iw]
									want[(ch*c.H+ih)*c.W+iw] += d
								}
								if got := u[r*ld+oh*g.OW+ow]; got != v {
									t.Fatalf("im2col row %d (%d,%d): %g, want %g", r, oh, ow, got, v)
								}
							}
						}
					}
				}
			}
			dx := make([]float64, len(x))
			for i := range dx {
				dx[i] = 7 // must be overwritten
			}
			col2im(&g, du, ld, dx, dxp)
			for i := range dx {
				if d := dx[i] - want[i]; d > 1e-12 || d < -1e-12 {
					t.Fatalf("col2im[%d] = %g, want %g", i, dx[i], want[i])
				}
			}
		})
	}
}

// gatherRef and scatterRef are the offset-table im2col and col2im of the Go
// path for S > 1 (one table of oh·S·Wp + ow·S over the zero-padded plane,
// one indirect load or add per entry), written out independently: the
// reference the vector kernels and the Go path must match bit for bit.
func gatherRef[T Float](g *geom, x, u []T, ld int) {
	hp, wp := g.H+2*g.P, g.W+2*g.P
	xp := make([]T, g.C*hp*wp)
	for c := range g.C {
		for h := range g.H {
			copy(xp[(c*hp+h+g.P)*wp+g.P:], x[(c*g.H+h)*g.W:(c*g.H+h+1)*g.W])
		}
	}
	off := refOffsets(g)
	r := 0
	for c := range g.C {
		for kh := range g.K {
			for kw := range g.K {
				src := xp[(c*hp+kh)*wp+kw:]
				row := u[r*ld : r*ld+len(off)]
				for j, o := range off {
					row[j] = src[o]
				}
				r++
			}
		}
	}
}

func scatterRef[T Float](g *geom, du []T, ld int, dx []T) {
	hp, wp := g.H+2*g.P, g.W+2*g.P
	acc := make([]T, g.C*hp*wp)
	off := refOffsets(g)
	r := 0
	for c := range g.C {
		for kh := range g.K {
			for kw := range g.K {
				dst := acc[(c*hp+kh)*wp+kw:]
				row := du[r*ld : r*ld+len(off)]
				for j, o := range off {
					dst[o] += row[j]
				}
				r++
			}
		}
	}
	for c := range g.C {
		for h := range g.H {
			copy(dx[(c*g.H+h)*g.W:(c*g.H+h+1)*g.W], acc[(c*hp+h+g.P)*wp+g.P:])
		}
	}
}

func refOffsets(g *geom) []int {
	wp := g.W + 2*g.P
	var off []int
	for oh := range g.OH {
		for ow := range g.OW {
			off = append(off, oh*g.S*wp+ow*g.S)
		}
	}
	return off
}

// TestStridedIm2colMatchesGather checks the strided im2col and col2im bit
// for bit against the offset-table reference, in float32 and float64, with
// every kernel set this CPU runs (the stride-2 AVX-512 kernels, and the Go
// loops), over strided geometries with and without padding, odd and even
// sizes, kernels smaller than, equal to and larger than the stride, padding
// wider than the stride, output rows of 1 to 16 (the vector kernels' masks:
// 2·OW−1 inputs below, at and above 16 lanes; col2im segments of 2·OW+K−2
// up to exactly 32) and of 17 and more, or segments over 32 (the Go loops'
// fallback). Inputs include signed zeros, infinities and NaNs, so
// that a sum started or ordered differently would show.
func TestStridedIm2colMatchesGather(t *testing.T) {
	cases := []struct{ C, H, W, K, S, P int }{
		{1, 28, 28, 8, 2, 3}, {16, 13, 13, 4, 2, 0}, {3, 7, 6, 3, 2, 1}, {2, 5, 7, 4, 3, 2},
		{2, 6, 6, 1, 2, 0}, {1, 9, 11, 2, 2, 0}, {2, 8, 8, 3, 2, 0}, {1, 10, 9, 5, 3, 4},
		{3, 12, 12, 4, 4, 1}, {1, 4, 4, 4, 2, 2}, {2, 15, 14, 7, 2, 3}, {1, 2, 3, 2, 2, 1},
		{1, 17, 17, 3, 2, 1}, {1, 18, 18, 4, 2, 1}, {2, 33, 31, 3, 2, 1}, {1, 35, 36, 4, 2, 0},
		{1, 6, 32, 3, 2, 1}, {1, 5, 33, 3, 2, 1}, {1, 40, 40, 8, 2, 3},
		{2, 9, 32, 2, 2, 0}, {1, 7, 30, 4, 2, 1}, // col2im segments of exactly 32
	}
	levels := []int{vecNone}
	if cpuVec >= vecAVX512 {
		levels = append(levels, vecAVX512)
	} else {
		t.Log("no AVX-512 on this CPU: only the Go loops are checked")
	}
	defer func() { vecLevel = cpuVec }()
	for _, lv := range levels {
		for _, c := range cases {
			t.Run(fmt.Sprintf("level%d/%+v", lv, c), func(t *testing.T) {
				vecLevel = lv
				stridedCase[float32](t, c.C, c.H, c.W, c.K, c.S, c.P)
				stridedCase[float64](t, c.C, c.H, c.W, c.K, c.S, c.P)
			})
		}
	}
	// The MNIST CNN's strided layers are the ones the kernels are for: the
	// gather on both (forward), the scatter on the second (the first
	// needs no input gradient).
	vecLevel = cpuVec
	if got, want := s2Gather(14) && s2Gather(5) && s2Scatter(5, 4), cpuVec >= vecAVX512; got != want {
		t.Errorf("stride-2 kernels on the MNIST CNN: %v with cpuVec %d", got, cpuVec)
	}
}

func stridedCase[T Float](t *testing.T, C, H, W, K, S, P int) {
	g := newGeom(C, H, W, K, S, P)
	s := rng.New(uint64(C*1000 + H*100 + K*10 + S + P))
	draw := func(n int) []T {
		v := make([]T, n)
		for i := range v {
			switch s.Uint64() % 16 {
			case 0, 1:
				v[i] = T(math.Copysign(0, -1))
			case 2, 3:
				v[i] = 0
			case 4:
				v[i] = T(math.Inf(1 - 2*int(s.Uint64()%2)))
			case 5:
				v[i] = T(math.NaN())
			default:
				v[i] = T(s.NormFloat64() * math.Exp(4*s.NormFloat64()))
			}
		}
		return v
	}
	p, rows := g.OH*g.OW, C*K*K
	ld := p + 5
	xp := make([]T, g.padSize())
	for i := range xp {
		xp[i] = 99 // stale scratch must not leak
	}
	for rep := range 2 { // the scratch is reused, as a worker's is
		x := draw(C * H * W)
		got, want := make([]T, rows*ld), make([]T, rows*ld)
		for i := range got {
			got[i], want[i] = 7, 7 // the gaps between rows must stay as they are
		}
		im2col(&g, x, got, ld, xp)
		gatherRef(&g, x, want, ld)
		for r := range rows {
			for j := range ld {
				a, b := got[r*ld+j], want[r*ld+j]
				if !equalBits(a, b) {
					t.Fatalf("%T rep %d: im2col row %d col %d = %v, want %v", a, rep, r, j, a, b)
				}
			}
		}
		du := draw(rows * ld)
		dx, dref := draw(len(x)), make([]T, len(x))
		col2im(&g, du, ld, dx, xp)
		scatterRef(&g, du, ld, dref)
		for i := range dx {
			if !equalBits(dx[i], dref[i]) {
				t.Fatalf("%T rep %d: col2im[%d] = %v, want %v", dx[i], rep, i, dx[i], dref[i])
			}
		}
	}
}

// equalBits reports whether a and b are the same float bit for bit, NaNs
// with their payloads included.
func equalBits[T Float](a, b T) bool {
	switch a := any(a).(type) {
	case float32:
		return math.Float32bits(a) == math.Float32bits(any(b).(float32))
	case float64:
		return math.Float64bits(a) == math.Float64bits(any(b).(float64))
	}
	return false
}
