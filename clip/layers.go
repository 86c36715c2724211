package clip

import (
	"math"

	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/sampler/mask"
)

// LayerClipper clips and sums per-sample gradients held per layer where the
// engine keeps them (nn.LayerGrads: Conv2d's per-sample cache in place), so
// twice sampling's masks and hybrid clipping's clamp run on conv nets
// without copying every gradient into one b×D buffer. The result is ClipSum
// of the materialised rows bit for bit: each norm is accumulated in
// SumSquares' order over the row in the parameter layout, and each
// coordinate's terms are added in example order.
type LayerClipper interface {
	ClipSumLayers(ls []nn.LayerGrads[float32], b int, masks []*mask.Mask, sum []float32) Stats
}

var _ LayerClipper = (*L2LInf)(nil)

// layerPiece is a range of one layer's coordinates, the unit of the
// parallel masked sum.
type layerPiece struct{ layer, lo, hi int }

// pieceLen is the coordinates per piece: a piece's slice of the sum stays
// in L1 while every example's terms are added to it.
const pieceLen = 2048

// layerScratch holds ClipSumLayers' buffers between calls.
type layerScratch struct {
	norms  []float64 // squared norms (LayerSumSquares)
	tops   []float32 // largest magnitudes
	scales []float32
	skip   []bool
	hit    []bool
	pieces []layerPiece
}

func (sc *layerScratch) prepare(ls []nn.LayerGrads[float32], b int) {
	if cap(sc.scales) < b {
		sc.scales, sc.skip, sc.hit = make([]float32, b), make([]bool, b), make([]bool, b)
		sc.norms, sc.tops = make([]float64, b), make([]float32, b)
	}
	sc.scales, sc.skip, sc.hit = sc.scales[:b], sc.skip[:b], sc.hit[:b]
	sc.norms, sc.tops = sc.norms[:b], sc.tops[:b]
	sc.pieces = sc.pieces[:0]
	for k, l := range ls {
		for lo := 0; lo < l.Len; lo += pieceLen {
			sc.pieces = append(sc.pieces, layerPiece{k, lo, min(l.Len, lo+pieceLen)})
		}
	}
}

// ClipSumLayers is ClipSum over per-layer gradients; see LayerClipper.
func (h *L2LInf) ClipSumLayers(ls []nn.LayerGrads[float32], b int, masks []*mask.Mask, sum []float32) Stats {
	d := 0
	for _, l := range ls {
		d += l.Len
	}
	if d != h.d || len(sum) != h.d || (masks != nil && len(masks) < b) {
		panic("clip: ClipSumLayers dimension mismatch")
	}
	sc := &h.layerScratch
	sc.prepare(ls, b)
	c := clampBound(h.cinf)
	// Pass 1, examples in parallel: each row's norm and largest coordinate.
	LayerSumSquares(ls, b, sc.norms, sc.tops)
	var st Stats
	for i := range b {
		s := l2Scale(sc.norms[i], h.c2)
		sc.scales[i], sc.skip[i] = s, s == 0
		sc.hit[i] = s != 0 && (s < 1 || float32(s*sc.tops[i]) > c)
		switch {
		case sc.skip[i]:
			st.NonFinite++
		case sc.hit[i]:
			st.Clipped++
		}
	}
	// Pass 2, coordinates in parallel: every example's scaled, clamped,
	// masked terms, in example order.
	nn.Parallel(len(sc.pieces), b*d, func(_, lo, hi int) {
		for _, p := range sc.pieces[lo:hi] {
			l := ls[p.layer]
			off := l.Offset + p.lo
			for i := range b {
				if sc.skip[i] {
					continue
				}
				v, s := l.Sample(i)[p.lo:p.hi], sc.scales[i]
				if m := maskAt(masks, i); m != nil {
					m.AddClampedMaskedRange(sum, off, v, s, c)
					continue
				}
				dst := sum[off : off+len(v)]
				for j, x := range v {
					dst[j] += min(max(float32(s*x), -c), c)
				}
			}
		}
	})
	return st
}

// laneSum is SumSquares fed in consecutive pieces: element j of the whole
// row (j < n4 = len &^ 3) goes to lane j mod 4 and the remainder to lane 0,
// each lane in row order, so the total has SumSquares' bits.
type laneSum struct {
	s     [4]float64
	j, n4 int
}

// add feeds v and returns max |v| (v finite; see maxAbs).
func (a *laneSum) add(v []float32) float32 {
	// The 4-wide loop skips at most 3 elements at each end.
	top := maxAbs(v[:min(len(v), 4)])
	top = max(top, maxAbs(v[max(0, len(v)-4):]))
	k := 0
	for ; k < len(v) && a.j < a.n4 && a.j&3 != 0; k, a.j = k+1, a.j+1 {
		f := float64(v[k])
		a.s[a.j&3] += f * f
	}
	n := max(0, min(len(v)-k, a.n4-a.j)&^3)
	if f := laneSumVec; f != nil && n > 0 {
		top = max(top, math.Float32frombits(f(v[k:k+n], &a.s)))
		k, a.j = k+n, a.j+n
		n = 0
	}
	s0, s1, s2, s3 := a.s[0], a.s[1], a.s[2], a.s[3]
	const mag = 1<<31 - 1
	var t0, t1, t2, t3 uint32
	for e := k + n; k < e; k += 4 {
		q := v[k : k+4 : k+4]
		x, y, z, u := float64(q[0]), float64(q[1]), float64(q[2]), float64(q[3])
		s0 += x * x
		s1 += y * y
		s2 += z * z
		s3 += u * u
		t0 = max(t0, math.Float32bits(q[0])&mag)
		t1 = max(t1, math.Float32bits(q[1])&mag)
		t2 = max(t2, math.Float32bits(q[2])&mag)
		t3 = max(t3, math.Float32bits(q[3])&mag)
	}
	top = max(top, math.Float32frombits(max(t0, t1, t2, t3)))
	a.j += n
	a.s = [4]float64{s0, s1, s2, s3}
	for ; k < len(v); k, a.j = k+1, a.j+1 {
		f := float64(v[k])
		if a.j < a.n4 {
			a.s[a.j&3] += f * f
		} else {
			a.s[0] += f * f
		}
	}
	return top
}

func (a *laneSum) total() float64 { return (a.s[0] + a.s[1]) + (a.s[2] + a.s[3]) }

// laneSumKernel is one vector form of laneSum's 4-wide loop: its name, whether
// this CPU runs it, and the loop (see laneSumVec).
type laneSumKernel struct {
	name string
	ok   bool
	fn   func(v []float32, acc *[4]float64) uint32
}

// LayerSumSquares writes to out[i] the float64 sum of squares of example
// i's gradient over every layer, for i < b: SumSquares of the materialised
// row, bit for bit (the lattice noise clips from it; docs/secure-noise.md),
// and, when tops is not nil, its largest magnitude to tops[i]. A
// non-finite coordinate makes the sum non-finite.
func LayerSumSquares(ls []nn.LayerGrads[float32], b int, out []float64, tops []float32) {
	d := 0
	for _, l := range ls {
		d += l.Len
	}
	out = out[:b]
	nn.Parallel(b, b*d, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			var acc laneSum
			acc.n4 = d &^ 3
			var top float32
			for _, l := range ls {
				top = max(top, acc.add(l.Sample(i)))
			}
			out[i] = acc.total()
			if tops != nil {
				tops[i] = top
			}
		}
	})
}
