package nn

// geom is the geometry of a convolution over one sample: C channels of H×W,
// K×K kernels at stride S with zero padding P, giving OH×OW positions.
type geom struct {
	C, H, W, K, S, P int
	OH, OW           int
	// off, for S > 1, holds each output position's offset oh·S·Wp + ow·S
	// in the zero-padded (H+2P)×(W+2P) plane: one table serves every
	// (c, kh, kw) row of im2col, which then gathers without branches.
	off []int32
}

// newGeom returns the geometry with its output size and, when strided, its
// gather table.
func newGeom(C, H, W, K, S, P int) geom {
	g := geom{C: C, H: H, W: W, K: K, S: S, P: P, OH: (H+2*P-K)/S + 1, OW: (W+2*P-K)/S + 1}
	if S > 1 {
		wp := W + 2*P
		g.off = make([]int32, 0, g.OH*g.OW)
		for oh := range g.OH {
			for ow := range g.OW {
				g.off = append(g.off, int32(oh*S*wp+ow*S))
			}
		}
	}
	return g
}

// padSize is the size of the zero-padded input the strided paths use as
// scratch (0 when they need none).
func (g *geom) padSize() int {
	if g.off == nil || g.P == 0 {
		return 0
	}
	return g.C * (g.H + 2*g.P) * (g.W + 2*g.P)
}

// span returns the output columns [lo, hi) whose input column
// ow·S − P + kw lies inside [0, W): outside them the patch reads padding.
func (g *geom) span(kw int) (lo, hi int) {
	// ow·S ≥ P − kw  and  ow·S ≤ W − 1 + P − kw.
	lo = 0
	if d := g.P - kw; d > 0 {
		lo = (d + g.S - 1) / g.S
	}
	hi = 0
	if d := g.W - 1 + g.P - kw; d >= 0 {
		hi = d/g.S + 1
	}
	hi = min(hi, g.OW)
	lo = min(lo, hi)
	return lo, hi
}

// im2col writes the receptive fields of sample x (C×H×W) into u: row
// (c,kh,kw) of u, at stride ld, holds that kernel tap over the OH×OW
// positions. The valid columns of each row are computed once per tap, so the
// inner loop is a contiguous copy (S = 1) or a strided gather without
// branches.
func im2col[T Float](g *geom, x, u []T, ld int, xp []T) {
	if g.off != nil {
		im2colGather(g, x, u, ld, xp)
		return
	}
	H, W, OH, OW, S, P := g.H, g.W, g.OH, g.OW, g.S, g.P
	r := 0
	for c := range g.C {
		xc := x[c*H*W : (c+1)*H*W]
		for kh := range g.K {
			for kw := range g.K {
				row := u[r*ld : r*ld+OH*OW]
				r++
				lo, hi := g.span(kw)
				if S == 1 && OW == W {
					im2colRows(row, xc, OH, W, kh-P, kw-P, lo, hi)
					continue
				}
				for oh := range OH {
					dst := row[oh*OW : (oh+1)*OW]
					ih := oh*S - P + kh
					if ih < 0 || ih >= H || lo == hi {
						clear(dst)
						continue
					}
					clear(dst[:lo])
					clear(dst[hi:])
					xr := xc[ih*W : (ih+1)*W]
					if S == 1 {
						copy(dst[lo:hi], xr[lo-P+kw:])
						continue
					}
					src := xr[lo*S-P+kw:]
					d := dst[lo:hi]
					for j := range d {
						d[j] = src[j*S]
					}
				}
			}
		}
	}
}

// im2colRows fills one im2col row for stride 1 when output rows are as wide
// as input rows (OW = W): then the valid part of the whole tap is one
// contiguous shifted copy of the input, and only the columns that wrapped
// into a neighbouring row ([0, lo) and [hi, W) of each output row) and the
// rows that read vertical padding are zeroed afterwards. dh and dw are the
// tap's offsets kh−P and kw−P.
func im2colRows[T Float](row, xc []T, OH, W, dh, dw, lo, hi int) {
	H := len(xc) / W
	oh0, oh1 := max(0, -dh), min(OH, H-dh)
	if oh0 >= oh1 || lo >= hi {
		clear(row)
		return
	}
	clear(row[:oh0*W])
	clear(row[oh1*W:])
	start, end := oh0*W+lo, (oh1-1)*W+hi
	copy(row[start:end], xc[start+dh*W+dw:])
	// At most K−1−P columns per side: plain stores beat memclr calls.
	for oh := oh0; oh < oh1; oh++ {
		r := row[oh*W : (oh+1)*W]
		for j := range r[:lo] {
			r[j] = 0
		}
		for j := hi; j < len(r); j++ {
			r[j] = 0
		}
	}
}

// col2im sets dx (C×H×W) to the sum of du's entries (rows at stride ld, laid
// out as im2col writes them) over the receptive fields.
func col2im[T Float](g *geom, du []T, ld int, dx, xp []T) {
	if g.off != nil {
		col2imScatter(g, du, ld, dx, xp)
		return
	}
	clear(dx)
	H, W, OH, OW, S, P := g.H, g.W, g.OH, g.OW, g.S, g.P
	r := 0
	for c := range g.C {
		dc := dx[c*H*W : (c+1)*H*W]
		for kh := range g.K {
			for kw := range g.K {
				row := du[r*ld : r*ld+OH*OW]
				r++
				lo, hi := g.span(kw)
				if lo == hi {
					continue
				}
				for oh := range OH {
					ih := oh*S - P + kh
					if ih < 0 || ih >= H {
						continue
					}
					src := row[oh*OW+lo : oh*OW+hi]
					dr := dc[ih*W+lo*S-P+kw : (ih+1)*W]
					if S == 1 {
						dr = dr[:len(src)]
						for j, v := range src {
							dr[j] += v
						}
						continue
					}
					for j, v := range src {
						dr[j*S] += v
					}
				}
			}
		}
	}
}

// im2colGather is im2col for stride S > 1: x is copied once into the
// zero-padded plane xp (padSize values; unused when P = 0), after which
// every row is a gather through g.off from the row's corner. The per-row
// loop over output rows, with its bounds and clears, cost more than the
// GEMM on the MNIST CNN's stride-2 layers.
func im2colGather[T Float](g *geom, x, u []T, ld int, xp []T) {
	hp, wp := g.H+2*g.P, g.W+2*g.P
	if g.P > 0 {
		xp = xp[:g.C*hp*wp]
		clear(xp)
		for c := range g.C {
			for h := range g.H {
				copy(xp[(c*hp+h+g.P)*wp+g.P:], x[(c*g.H+h)*g.W:(c*g.H+h+1)*g.W])
			}
		}
		x = xp
	}
	n, r := len(g.off), 0
	if x32, ok := any(x).([]float32); ok && gatherS2Taps(g, x32, any(u).([]float32), ld) {
		return
	}
	for c := range g.C {
		for kh := range g.K {
			for kw := range g.K {
				src := x[(c*hp+kh)*wp+kw:]
				row := u[r*ld : r*ld+n]
				for j, o := range g.off {
					row[j] = src[o]
				}
				r++
			}
		}
	}
}

// col2imScatter is col2im for stride S > 1: the rows are scattered through
// g.off into the zero-padded plane xp, whose interior is then dx.
func col2imScatter[T Float](g *geom, du []T, ld int, dx, xp []T) {
	hp, wp := g.H+2*g.P, g.W+2*g.P
	acc := dx
	if g.P > 0 {
		acc = xp[:g.C*hp*wp]
	}
	clear(acc)
	a32, ok := any(acc).([]float32)
	if !ok || !scatterS2Taps(g, any(du).([]float32), ld, a32) {
		scatterTaps(g, du, ld, acc)
	}
	if g.P > 0 {
		for c := range g.C {
			for h := range g.H {
				copy(dx[(c*g.H+h)*g.W:(c*g.H+h+1)*g.W], acc[(c*hp+h+g.P)*wp+g.P:])
			}
		}
	}
}

// scatterTaps adds every tap's row of du through g.off into the padded
// plane acc, taps in (c, kh, kw) order.
func scatterTaps[T Float](g *geom, du []T, ld int, acc []T) {
	hp, wp := g.H+2*g.P, g.W+2*g.P
	n, r := len(g.off), 0
	for c := range g.C {
		for kh := range g.K {
			for kw := range g.K {
				dst := acc[(c*hp+kh)*wp+kw:]
				row := du[r*ld : r*ld+n]
				for j, o := range g.off {
					dst[o] += row[j]
				}
				r++
			}
		}
	}
}

// gatherS2Taps is im2colGather's tap loop for stride 2 in float32 by the
// vector kernel (one call per channel, a permute per output row instead of
// an indirect load per entry), reading the padded plane xp (or x when
// P = 0); false when the kernel does not apply and nothing was written.
func gatherS2Taps(g *geom, xp, u []float32, ld int) bool {
	if g.S != 2 || !s2Gather(g.OW) {
		return false
	}
	hp, wp, kk := g.H+2*g.P, g.W+2*g.P, g.K*g.K
	for c := range g.C {
		gatherS2(u[c*kk*ld:], xp[c*hp*wp:], g.K, g.OH, ld, g.OW, wp)
	}
	return true
}

// scatterS2Taps is col2imScatter's tap loop for stride 2 in float32 by the
// vector kernel, adding into acc in the same order (taps in (c, kh, kw)
// order, each entry once per tap); false when the kernel does not apply and
// nothing was added.
func scatterS2Taps(g *geom, du []float32, ld int, acc []float32) bool {
	if g.S != 2 || !s2Scatter(g.OW, g.K) {
		return false
	}
	hp, wp, kk := g.H+2*g.P, g.W+2*g.P, g.K*g.K
	for c := range g.C {
		scatterAddS2(acc[c*hp*wp:], du[c*kk*ld:], g.K, g.OH, ld, g.OW, wp)
	}
	return true
}
