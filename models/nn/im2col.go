package nn

// geom is the geometry of a convolution over one sample: C channels of H×W,
// K×K kernels at stride S with zero padding P, giving OH×OW positions.
type geom struct {
	C, H, W, K, S, P int
	OH, OW           int
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
func im2col[T Float](g *geom, x, u []T, ld int) {
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
func col2im[T Float](g *geom, du []T, ld int, dx []T) {
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
