package clip

import (
	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/sampler"
)

// FactoredClipper clips and sums per-sample gradients given in factored
// form (every parametric layer Linear: sample i's weight gradient is
// DZ_i·A_iᵀ), so twice sampling's per-example masks and hybrid clipping's
// per-coordinate clamp run without materialising any gradient. The norm is
// ‖DZ_i‖²(‖A_i‖² + 1 with bias) summed over layers, as the norm-only path
// computes it; each coordinate is rounded as a materialised one is.
type FactoredClipper interface {
	ClipSumFactored(fs []nn.LinearFactors[float32], b int, masks []*sampler.Mask, sum []float32) Stats
}

var (
	_ FactoredClipper = (*L2)(nil)
	_ FactoredClipper = (*L2LInf)(nil)
)

// ClipSumFactored is ClipSum over factored gradients; see FactoredClipper.
func (l *L2) ClipSumFactored(fs []nn.LinearFactors[float32], b int, masks []*sampler.Mask, sum []float32) Stats {
	return clipSumFactored(fs, b, masks, sum, l.c, 0)
}

// ClipSumFactored is ClipSum over factored gradients; see FactoredClipper.
func (h *L2LInf) ClipSumFactored(fs []nn.LinearFactors[float32], b int, masks []*sampler.Mask, sum []float32) Stats {
	return clipSumFactored(fs, b, masks, sum, h.c2, clampBound(h.cinf))
}

// one is the input of a bias "row": its gradient is DZ itself.
var one = []float32{1}

// clipSumFactored scales sample i by min(1, c2/‖g_i‖) and, when cinf > 0,
// clamps every coordinate to ±cinf, adding the masked coordinates (all
// without masks) to sum.
func clipSumFactored(fs []nn.LinearFactors[float32], b int, masks []*sampler.Mask, sum []float32, c2 float64, cinf float32) Stats {
	var st Stats
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
			continue
		}
		if s < 1 || (cinf > 0 && float32(s*top) > cinf) {
			st.Clipped++
		}
		m := maskAt(masks, i)
		for _, f := range fs {
			a, dz := f.A[i*f.In:(i+1)*f.In], f.DZ[i*f.Out:(i+1)*f.Out]
			for r, d := range dz {
				addOuter(sum, m, f.Offset+r*f.In, d, a, s, cinf)
			}
			if f.Bias {
				for r, d := range dz {
					addOuter(sum, m, f.Offset+f.Out*f.In+r, d, one, s, cinf)
				}
			}
		}
	}
	return st
}

// addOuter adds row d·a (scaled, clamped when cinf > 0, masked when m is
// not nil) at off.
func addOuter(sum []float32, m *sampler.Mask, off int, d float32, a []float32, s, cinf float32) {
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
