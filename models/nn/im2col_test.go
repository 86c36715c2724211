package nn

import (
	"fmt"
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
