package clip

import (
	"math"

	"github.com/dptrain/dptrain/internal/gemm"
	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/sampler/mask"
)

// FactoredClipper clips and sums per-sample gradients given in factored
// form (every parametric layer Linear: sample i's weight gradient is
// DZ_i·A_iᵀ), so twice sampling's per-example masks and hybrid clipping's
// per-coordinate clamp run without materialising any gradient. The norm is
// ‖DZ_i‖²(‖A_i‖² + 1 with bias) summed over layers, as the norm-only path
// computes it; each coordinate is rounded as a materialised one is.
type FactoredClipper interface {
	ClipSumFactored(fs []nn.LinearFactors[float32], b int, masks []*mask.Mask, sum []float32) Stats
}

var (
	_ FactoredClipper = (*L2)(nil)
	_ FactoredClipper = (*L2LInf)(nil)
)

// ClipSumFactored is ClipSum over factored gradients; see FactoredClipper.
func (l *L2) ClipSumFactored(fs []nn.LinearFactors[float32], b int, masks []*mask.Mask, sum []float32) Stats {
	return clipSumFactored(fs, b, masks, sum, l.c, 0, &l.factScratch)
}

// ClipSumFactored is ClipSum over factored gradients; see FactoredClipper.
func (h *L2LInf) ClipSumFactored(fs []nn.LinearFactors[float32], b int, masks []*mask.Mask, sum []float32) Stats {
	return clipSumFactored(fs, b, masks, sum, h.c2, clampBound(h.cinf), &h.factScratch)
}

// one is the input of a bias "row": its gradient is DZ itself.
var one = []float32{1}

// clipSumFactored scales sample i by min(1, c2/‖g_i‖) and, when cinf > 0,
// clamps every coordinate to ±cinf, adding the masked coordinates (all
// without masks) to sum.
//
// Without masks, the rows of a Linear layer that cannot reach ±cinf are
// summed as one GEMM per layer, Σ_i s_i·DZ_iᵀ·A_i, and only the rows that
// may clamp are formed coordinate by coordinate: after L2 clipping few
// coordinates exceed C/√d0, so hybrid clipping costs little more than a
// GEMM (the sum differs from the coordinate-wise one by float32 rounding
// of the order of summation).
// scratch holds the GEMM's left factors between calls.
func clipSumFactored(fs []nn.LinearFactors[float32], b int, masks []*mask.Mask, sum []float32, c2 float64, cinf float32, scratch *[]float32) Stats {
	var st Stats
	var dropped []int      // the non-finite examples, ascending
	var scaled [][]float32 // per layer, b×Out: s_i·DZ_i with the rows that may clamp zeroed
	if masks == nil {
		n := 0
		for _, f := range fs {
			n += b * f.Out
		}
		if cap(*scratch) < n {
			*scratch = make([]float32, n)
		}
		buf := (*scratch)[:n]
		clear(buf) // an example skipped as non-finite leaves its rows at zero
		scaled = make([][]float32, len(fs))
		for l, f := range fs {
			scaled[l], buf = buf[:b*f.Out], buf[b*f.Out:]
		}
	}
	for i := 0; i < b; i++ {
		var ss float64
		var top float32 // the largest |coordinate|: max|dz|·max(max|a|, 1 with bias)
		for _, f := range fs {
			a, dz := f.A[i*f.In:(i+1)*f.In], f.DZ[i*f.Out:(i+1)*f.Out]
			sa, sd := SumSquares(a), SumSquares(dz)
			if f.Bias {
				sa++
			}
			ss += sd * sa
			if cinf > 0 {
				ma := maxAbs(a)
				if f.Bias {
					ma = max(ma, 1)
				}
				top = max(top, maxAbs(dz)*ma)
			}
		}
		s := l2Scale(ss, c2)
		if s == 0 {
			st.NonFinite++
			dropped = append(dropped, i)
			continue
		}
		if s < 1 || (cinf > 0 && float32(s*top) > cinf) {
			st.Clipped++
		}
		m := maskAt(masks, i)
		for l, f := range fs {
			a, dz := f.A[i*f.In:(i+1)*f.In], f.DZ[i*f.Out:(i+1)*f.Out]
			if scaled != nil {
				gemmRows(scaled[l][i*f.Out:(i+1)*f.Out], sum, f, a, dz, s, cinf)
			} else {
				for r, d := range dz {
					addOuter(sum, m, f.Offset+r*f.In, d, a, s, cinf)
				}
			}
			if f.Bias {
				for r, d := range dz {
					addOuter(sum, m, f.Offset+f.Out*f.In+r, d, one, s, cinf)
				}
			}
		}
	}
	// A dropped example's rows are left out of the GEMM, not multiplied by
	// its zero scale: its activations may be ±Inf, and 0·Inf = NaN. The
	// kept examples form runs [lo, hi) summed one GEMM each; with no drop
	// that is the one GEMM over the chunk.
	for l, f := range scaled {
		lo := 0
		for _, hi := range append(dropped, b) {
			if hi > lo {
				// sum[W] (Out×In) += scaledᵀ (Out×n) · A (n×In) over examples [lo, hi)
				fl := fs[l]
				gemm.Sgemm(true, false, fl.Out, fl.In, hi-lo, 1, f[lo*fl.Out:hi*fl.Out], fl.Out, fl.A[lo*fl.In:hi*fl.In], fl.In, 1, sum[fl.Offset:fl.Offset+fl.Out*fl.In], fl.In)
			}
			lo = hi + 1
		}
	}
	return st
}

// gemmRows writes s·d for each row of dz whose coordinates s·d·a_c cannot
// reach ±cinf into dst (the row's share of the GEMM) and adds the other rows
// coordinate by coordinate, clamped, writing 0 in dst for them. A row is
// safe when s·|d|·max|a| is below cinf by more than the two float32
// roundings of s·(d·a_c); rows at the margin take the exact path.
func gemmRows(dst, sum []float32, f nn.LinearFactors[float32], a, dz []float32, s, cinf float32) {
	limit := math.Inf(1)
	if cinf > 0 {
		if ma := float64(maxAbs(a)); ma > 0 {
			limit = float64(cinf) / (float64(s) * ma * (1 + 1e-6))
		}
	}
	for r, d := range dz {
		if math.Abs(float64(d)) <= limit {
			dst[r] = s * d
			continue
		}
		dst[r] = 0
		addOuter(sum, nil, f.Offset+r*f.In, d, a, s, cinf)
	}
}

// addOuter adds row d·a (scaled, clamped when cinf > 0, masked when m is
// not nil) at off.
func addOuter(sum []float32, m *mask.Mask, off int, d float32, a []float32, s, cinf float32) {
	if m != nil {
		m.AddOuterMasked(sum, off, d, a, s, cinf)
		return
	}
	dst := sum[off : off+len(a)]
	for c, v := range a {
		x := float32(s * float32(d*v))
		if cinf > 0 {
			x = min(max(x, -cinf), cinf)
		}
		dst[c] += x
	}
}
