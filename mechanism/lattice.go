package mechanism

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/clip"

	"github.com/dptrain/dptrain/lattice"
)

// LatticeNoise is the lattice mechanism's noise (docs/secure-noise.md):
// a *lattice.Noise whose clip norm is the mechanism's L2 sensitivity and
// whose std is σ times it, so the event the Mechanism charges (the
// Gaussian mechanism at that sensitivity and multiplier) describes it
// unchanged: the released lattice point is a post-processing of it.
type LatticeNoise struct {
	*lattice.Noise
	bounds   LatticeBounds
	variance float64
}

// TotalVariance is E‖e‖² of one draw in parameter units:
// d·γ²·Var(round(Z)), Var(round(Z)) = s² + 1/12 up to a term below
// 2⁻¹⁰⁰ for the lattice std s = σ·2ᵏ ≥ 1 (Sheppard's correction).
func (n *LatticeNoise) TotalVariance() float64 { return n.variance }

// LatticeNoise is the gradient noise at noise multiplier sigma on the
// lattice γℤᵈ, γ = Δ·2⁻ᵏ, over the clipper's coordinates and extra more
// (an audit's canary block, whose canaries are lattice points of norm
// exactly Δ). Flat clipping has Δ = C. Per-layer, L∞ and hybrid clipping
// have Δ = fl(Δ2)·(1 + 2⁻⁴⁰) with Δ2 the clipper's L2 sensitivity
// (√ΣC_l², √d·c∞, min(C, √d·c∞)): an upper bound of its exact value,
// which the float computation misses by less than (L+4)·2⁻⁵³ relatively
// (L < 4096 layers), so the clipped lattice points have norm within 2ᵏ. The
// noise std σΔ then exceeds σ times the exact sensitivity by that factor:
// the release is the charged Gaussian mechanism plus independent Gaussian
// noise, rounded, so the charged multiplier σ stays valid
// (docs/secure-noise.md). With the adaptive clip the gradient's
// multiplier is its share of σ (GradientMultiplier), as for the float
// noise. Per-block noise (subspace) is refused.
func (m *Mechanism) LatticeNoise(sigma float64, extra, k int) (*LatticeNoise, error) {
	if m.clipper == nil {
		return nil, fmt.Errorf("%w: the mechanism has no clipper to noise", ErrInvalid)
	}
	if m.shape != nil {
		return nil, fmt.Errorf("%w: lattice noise needs one noise multiplier over every coordinate (not subspace clipping)", ErrInvalid)
	}
	z, err := m.GradientMultiplier(sigma) // the adaptive clip's share of σ (σ itself otherwise)
	if err != nil {
		return nil, err
	}
	b := LatticeBounds{C2: m.sens.L2, CInf: math.Inf(1)}
	delta := m.sens.L2
	switch m.spec.Clip {
	case Flat:
	case PerLayer:
		pl, ok := m.clipper.(*clip.PerLayer)
		if !ok {
			return nil, fmt.Errorf("%w: clip per-layer with a %T clipper", ErrInvalid, m.clipper)
		}
		b.Layers = pl.Norms()
		if len(b.Layers) >= 4096 {
			return nil, fmt.Errorf("%w: lattice noise with clip per-layer takes fewer than 4096 layers, got %d", ErrInvalid, len(b.Layers))
		}
		delta = m.sens.L2 * (1 + 0x1p-40)
	case LInf, Hybrid:
		if len(m.sens.Blocks) != 1 {
			return nil, fmt.Errorf("%w: clip %s with %d blocks", ErrInvalid, m.spec.Clip, len(m.sens.Blocks))
		}
		b.CInf = m.sens.LInf
		if m.spec.Clip == LInf {
			b.C2 = math.Inf(1) // clamped only
		} else {
			b.C2 = m.sens.Blocks[0].C2
		}
		delta = m.sens.L2 * (1 + 0x1p-40)
	default:
		return nil, fmt.Errorf("%w: lattice noise does not support clip %s", ErrInvalid, m.spec.Clip)
	}
	d := m.clipper.OutDim() + extra
	nz, err := lattice.New(delta, z, d, k)
	if err != nil {
		return nil, err
	}
	s, g := nz.LatticeStd()[0], nz.Gamma()
	return &LatticeNoise{Noise: nz, bounds: b, variance: float64(d) * g * g * (s*s + 1.0/12)}, nil
}

// LatticeBounds are the clip bounds the lattice strategy applies to each
// example: per-layer L2 bounds (Layers, nil unless per-layer), else one L2
// bound C2 over the whole vector (+Inf: none) and a per-coordinate bound
// CInf (+Inf: none).
type LatticeBounds struct {
	Layers   []float64
	C2, CInf float64
}

// Bounds returns the clip bounds of the mechanism's clipper.
func (n *LatticeNoise) Bounds() LatticeBounds { return n.bounds }
