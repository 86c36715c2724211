package clip

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/sampler/mask"
)

// L2 is flat L2 clipping: g·min(1, C/‖g‖₂). The norm is accumulated group by
// group (groups only fix the summation order, so that the norm-only path
// over PerSampleNormsSq agrees bit for bit).
type L2 struct {
	c      float64
	d      int
	groups []nn.Group

	factScratch []float32 // ClipSumFactored's GEMM factors, reused across calls
}

// NewL2 clips D-dimensional gradients to L2 norm c. groups may be nil (one
// group) or the model's Groups().
func NewL2(c float64, d int, groups []nn.Group) (*L2, error) {
	if err := checkPositive("L2 clip norm", c); err != nil {
		return nil, err
	}
	gs, err := groupsOrWhole(groups, d)
	if err != nil {
		return nil, err
	}
	return &L2{c: c, d: d, groups: gs}, nil
}

func (l *L2) InDim() int  { return l.d }
func (l *L2) OutDim() int { return l.d }

// Sensitivity: L2 = C; each coordinate is bounded by C as well.
func (l *L2) Sensitivity() Sensitivity {
	return Sensitivity{L2: l.c, LInf: l.c, Blocks: []Block{{Name: "all", Dim: l.d, C2: l.c, CInf: l.c, D0: 1}}}
}

// Clip writes g·min(1, C/‖g‖) into out.
func (l *L2) Clip(out, g []float32) {
	scaleInto(out, g, l2Scale(groupedSumSquares(g, l.groups), l.c))
}

func scaleInto(out, g []float32, s float32) {
	if len(out) != len(g) {
		panic("clip: Clip length mismatch")
	}
	if s == 0 {
		clear(out)
		return
	}
	for j, v := range g {
		out[j] = s * v
	}
}

// ClipSum clips and sums b rows; see Clipper.
func (l *L2) ClipSum(grads []float32, b int, masks []*mask.Mask, sum []float32) Stats {
	checkRows(grads, b, l.d, masks, sum, l.d)
	var st Stats
	for i := 0; i < b; i++ {
		row := grads[i*l.d : (i+1)*l.d]
		s := l2Scale(groupedSumSquares(row, l.groups), l.c)
		switch {
		case s == 0:
			st.NonFinite++
			continue
		case s < 1:
			st.Clipped++
		}
		addScaled(sum, row, s, maskAt(masks, i))
	}
	return st
}

func maskAt(masks []*mask.Mask, i int) *mask.Mask {
	if masks == nil {
		return nil
	}
	return masks[i]
}

// addScaled adds s·row to sum, or (with a mask) its masked coordinates, in
// one pass; row is not written. float32(s*v) forbids a fused multiply-add,
// so the result matches AccumulateScaled-style sum += float32(s*g) exactly.
func addScaled(sum, row []float32, s float32, m *mask.Mask) {
	switch {
	case m == nil:
		for j, v := range row {
			sum[j] += float32(s * v)
		}
	case s == 1:
		m.AddMaskedTo(sum, row)
	default:
		m.AddScaledMaskedTo(sum, row, s)
	}
}

// Scales implements the norm-only fast path: scale_{i,k} = min(1, C/‖g_i‖)
// for every group k, with ‖g_i‖² = Σ_k normsSq[i*K+k].
func (l *L2) Scales(normsSq []float64, b int, scales []float32) Stats {
	k := len(l.groups)
	checkScales(normsSq, b, k, scales)
	var st Stats
	for i := 0; i < b; i++ {
		var ss float64
		for _, v := range normsSq[i*k : (i+1)*k] {
			ss += v
		}
		s := l2Scale(ss, l.c)
		switch {
		case s == 0:
			st.NonFinite++
		case s < 1:
			st.Clipped++
		}
		for j := i * k; j < (i+1)*k; j++ {
			scales[j] = s
		}
	}
	return st
}

func checkScales(normsSq []float64, b, k int, scales []float32) {
	if b < 0 || len(normsSq) < b*k || len(scales) < b*k {
		panic(fmt.Sprintf("clip: Scales needs %d×%d norms and scales, got %d and %d", b, k, len(normsSq), len(scales)))
	}
}

// PerLayer clips each parameter group k separately to L2 norm C_k. With
// Σ_k C_k² = C² the whole clipped vector has L2 norm ≤ C.
type PerLayer struct {
	c      []float64
	d      int
	groups []nn.Group
}

// NewPerLayer splits the total budget c over the groups in proportion to
// weights: C_k = c·√(w_k/Σw), so Σ C_k² = c². weights nil means equal
// weights (C_k = c/√K); GroupSizeWeights weighs groups by their size.
func NewPerLayer(c float64, d int, groups []nn.Group, weights []float64) (*PerLayer, error) {
	if err := checkPositive("per-layer clip budget", c); err != nil {
		return nil, err
	}
	gs, err := groupsOrWhole(groups, d)
	if err != nil {
		return nil, err
	}
	if weights == nil {
		weights = make([]float64, len(gs))
		for i := range weights {
			weights[i] = 1
		}
	}
	if len(weights) != len(gs) {
		return nil, fmt.Errorf("clip: %d per-layer weights for %d groups", len(weights), len(gs))
	}
	var tot float64
	for i, w := range weights {
		if !(w > 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("clip: per-layer weight of group %q must be positive and finite, got %v", gs[i].Name, w)
		}
		tot += w
	}
	cs := make([]float64, len(gs))
	for i, w := range weights {
		cs[i] = c * math.Sqrt(w/tot)
	}
	return &PerLayer{c: cs, d: d, groups: gs}, nil
}

// NewPerLayerNorms uses explicit per-group clip norms C_k (total C =
// √ΣC_k²).
func NewPerLayerNorms(norms []float64, d int, groups []nn.Group) (*PerLayer, error) {
	gs, err := groupsOrWhole(groups, d)
	if err != nil {
		return nil, err
	}
	if len(norms) != len(gs) {
		return nil, fmt.Errorf("clip: %d per-layer clip norms for %d groups", len(norms), len(gs))
	}
	for i, c := range norms {
		if err := checkPositive(fmt.Sprintf("clip norm of group %q", gs[i].Name), c); err != nil {
			return nil, err
		}
	}
	return &PerLayer{c: append([]float64(nil), norms...), d: d, groups: gs}, nil
}

// GroupSizeWeights returns w_k = Len_k, so C_k² ∝ the group's size.
func GroupSizeWeights(groups []nn.Group) []float64 {
	w := make([]float64, len(groups))
	for i, g := range groups {
		w[i] = float64(g.Len)
	}
	return w
}

// Norms returns the per-group clip norms C_k.
func (p *PerLayer) Norms() []float64 { return append([]float64(nil), p.c...) }

func (p *PerLayer) InDim() int  { return p.d }
func (p *PerLayer) OutDim() int { return p.d }

// Sensitivity: L2 = √ΣC_k², one block per group.
func (p *PerLayer) Sensitivity() Sensitivity {
	var ss, mx float64
	bl := make([]Block, len(p.groups))
	for i, g := range p.groups {
		ss += p.c[i] * p.c[i]
		mx = math.Max(mx, p.c[i])
		bl[i] = Block{Name: g.Name, Dim: g.Len, C2: p.c[i], CInf: p.c[i], D0: 1}
	}
	return Sensitivity{L2: math.Sqrt(ss), LInf: mx, Blocks: bl}
}

// Clip clips each group of g to its C_k, into out. A non-finite g yields
// zeros (the whole example is dropped, as in ClipSum).
func (p *PerLayer) Clip(out, g []float32) {
	if len(out) != len(g) || len(g) != p.d {
		panic("clip: Clip length mismatch")
	}
	if !allFinite(g) {
		clear(out)
		return
	}
	for k, gr := range p.groups {
		seg := g[gr.Offset : gr.Offset+gr.Len]
		scaleInto(out[gr.Offset:gr.Offset+gr.Len], seg, l2Scale(SumSquares(seg), p.c[k]))
	}
}

// ClipSum clips and sums b rows; see Clipper.
func (p *PerLayer) ClipSum(grads []float32, b int, masks []*mask.Mask, sum []float32) Stats {
	checkRows(grads, b, p.d, masks, sum, p.d)
	var st Stats
	for i := 0; i < b; i++ {
		row := grads[i*p.d : (i+1)*p.d]
		if !allFinite(row) {
			st.NonFinite++
			continue
		}
		m := maskAt(masks, i)
		for k, gr := range p.groups {
			seg := row[gr.Offset : gr.Offset+gr.Len]
			s := l2Scale(SumSquares(seg), p.c[k])
			if s < 1 {
				st.Clipped++
			}
			if m == nil {
				addScaled(sum[gr.Offset:gr.Offset+gr.Len], seg, s, nil)
			} else if s != 1 {
				for j, v := range seg {
					seg[j] = s * v
				}
			}
		}
		if m != nil {
			m.AddMaskedTo(sum, row)
		}
	}
	return st
}

// Scales implements the norm-only fast path: scale_{i,k} = min(1,
// C_k/‖g_{i,k}‖). An example with any non-finite group norm gets scale 0
// in every group.
func (p *PerLayer) Scales(normsSq []float64, b int, scales []float32) Stats {
	k := len(p.groups)
	checkScales(normsSq, b, k, scales)
	var st Stats
	for i := 0; i < b; i++ {
		row := normsSq[i*k : (i+1)*k]
		bad := false
		for _, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				bad = true
			}
		}
		if bad {
			st.NonFinite++
			clear(scales[i*k : (i+1)*k])
			continue
		}
		for j, v := range row {
			s := l2Scale(v, p.c[j])
			if s < 1 {
				st.Clipped++
			}
			scales[i*k+j] = s
		}
	}
	return st
}
