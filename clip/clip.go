package clip

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/internal/vec"
	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/sampler/mask"
)

// Block is one block of a clipped vector's sensitivity, in released
// coordinates: Dim coordinates, L2 norm ≤ C2, every coordinate in
// [−CInf, CInf], with CInf = C2/√D0 ≤ C2. D0 is paper 003's d0, kept exactly
// as configured (1 when there is no separate L∞ clip) so the accountant sees
// the same number.
type Block struct {
	Name string
	Dim  int
	C2   float64
	CInf float64
	D0   float64
}

// Sensitivity describes what one example can add to the clipped sum.
type Sensitivity struct {
	// L2 bounds the L2 norm of one example's whole released contribution;
	// isotropic noise is calibrated to it.
	L2 float64
	// LInf bounds every coordinate of one example's contribution.
	LInf float64
	// Blocks partition the released coordinates (in order) with per-block
	// bounds: what the twice-sampling and anisotropic accountants need.
	Blocks []Block
}

// Stats counts what clipping did in one ClipSum call. Under hidden-state
// accounting these counts are private and must not be released.
type Stats struct {
	// Clipped counts examples (or, for PerLayer, example-groups) scaled
	// down by an L2 clip.
	Clipped int
	// NonFinite counts examples whose gradient had a NaN or ±Inf; they
	// contribute nothing (dropping is within any sensitivity bound).
	NonFinite int
}

func (s *Stats) add(o Stats) { s.Clipped += o.Clipped; s.NonFinite += o.NonFinite }

// Clipper is one clipping rule.
type Clipper interface {
	// InDim is the per-sample gradient length D; OutDim the length of the
	// released vector that is summed and noised (D, or k + D for Subspace).
	InDim() int
	OutDim() int
	// Clip writes the released, clipped form of one gradient g (length
	// InDim) into out (length OutDim). out may alias g when the lengths
	// are equal. A non-finite g yields zeros.
	Clip(out, g []float32)
	// ClipSum clips each of the b rows of grads (b × InDim, row-major) and
	// adds them to sum (length OutDim). With masks non-nil (one per row,
	// twice sampling), row i adds only the coordinates in masks[i], after
	// clipping. grads is left unchanged only by Subspace; the flat
	// variants clip masked rows in place.
	ClipSum(grads []float32, b int, masks []*mask.Mask, sum []float32) Stats
	// Sensitivity is the per-example bound of the clipped contribution.
	Sensitivity() Sensitivity
}

// NormClipper is a Clipper with a norm-only fast path.
type NormClipper interface {
	Clipper
	// Scales maps per-sample per-group squared norms (b × K, K groups, as
	// PerSampleNormsSq writes them) to the per-sample per-group scales
	// AccumulateScaled takes. Non-finite norms give scale 0.
	Scales(normsSq []float64, b int, scales []float32) Stats
}

// l2Scale is min(1, c/√ss) as a float32 rounded toward zero, so the scaled
// vector never exceeds c in exact arithmetic. Non-finite ss gives 0.
func l2Scale(ss, c float64) float32 {
	if ss <= c*c {
		return 1
	}
	if math.IsNaN(ss) || math.IsInf(ss, 0) {
		return 0
	}
	r := c / math.Sqrt(ss)
	s := float32(r)
	if float64(s) > r {
		s = math.Nextafter32(s, 0)
	}
	return s
}

// SumSquares is Σ g_j² accumulated in float64 (four interleaved partial
// sums, combined in a fixed order): the norm every clipper here uses. A
// model whose PerSampleNormsSq uses this routine per group reproduces the
// materialised clipped sum bit for bit.
func SumSquares(g []float32) float64 { return vec.SumSquares(g) }

// groupsOrWhole returns groups, or one group covering [0, d) when nil, after
// checking that they tile [0, d) in order.
func groupsOrWhole(groups []nn.Group, d int) ([]nn.Group, error) {
	if d < 1 {
		return nil, fmt.Errorf("clip: dimension must be >= 1, got %d", d)
	}
	if len(groups) == 0 {
		return []nn.Group{{Name: "all", Offset: 0, Len: d}}, nil
	}
	off := 0
	for _, g := range groups {
		if g.Offset != off || g.Len < 1 {
			return nil, fmt.Errorf("clip: group %q at offset %d len %d does not continue at %d", g.Name, g.Offset, g.Len, off)
		}
		off += g.Len
	}
	if off != d {
		return nil, fmt.Errorf("clip: groups cover %d parameters, dimension is %d", off, d)
	}
	return append([]nn.Group(nil), groups...), nil
}

// groupedSumSquares is Σ_k SumSquares(g[group k]): the same order as a sum
// of PerSampleNormsSq entries over the groups.
func groupedSumSquares(g []float32, groups []nn.Group) float64 {
	var s float64
	for _, gr := range groups {
		s += SumSquares(g[gr.Offset : gr.Offset+gr.Len])
	}
	return s
}

func checkRows(grads []float32, b, d int, masks []*mask.Mask, sum []float32, out int) {
	if b < 0 || len(grads) < b*d {
		panic(fmt.Sprintf("clip: grads has %d values, need %d×%d", len(grads), b, d))
	}
	if len(sum) != out {
		panic(fmt.Sprintf("clip: sum has length %d, want %d", len(sum), out))
	}
	if masks != nil {
		if len(masks) < b {
			panic(fmt.Sprintf("clip: %d masks for %d rows", len(masks), b))
		}
		for _, m := range masks[:b] {
			if m.Len() != out {
				panic(fmt.Sprintf("clip: mask over %d coordinates, released vector has %d", m.Len(), out))
			}
		}
	}
}

func checkPositive(name string, v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("clip: %s must be positive and finite, got %v", name, v)
	}
	return nil
}

// allFinite reports whether g has no NaN or ±Inf.
func allFinite(g []float32) bool {
	for _, v := range g {
		if v-v != 0 {
			return false
		}
	}
	return true
}

func clipErrorf(format string, args ...any) error {
	return fmt.Errorf("clip: "+format, args...)
}
