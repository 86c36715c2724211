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
	layers   []float64 // per-layer clip norms (nil: flat)
	variance float64
}

// TotalVariance is E‖e‖² of one draw in parameter units:
// d·γ²·Var(round(Z)), Var(round(Z)) = s² + 1/12 up to a term below
// 2⁻¹⁰⁰ for the lattice std s = σ·2ᵏ ≥ 1 (Sheppard's correction).
func (n *LatticeNoise) TotalVariance() float64 { return n.variance }

// LatticeNoise is the gradient noise at noise multiplier sigma on the
// lattice γℤᵈ, γ = Δ·2⁻ᵏ, over the clipper's coordinates and extra more
// (an audit's canary block, whose canaries are lattice points of norm
// exactly Δ). Flat clipping has Δ = C. Per-layer clipping has
// Δ = fl(√ΣC_l²)·(1 + 2⁻⁴⁰), an upper bound of the exact √ΣC_l² for fewer
// than 4096 layers (the float sum and root err by less than (L+4)·2⁻⁵³
// relatively), so the layers' lattice points, each within 2ᵏ·C_l/Δ, have a
// total norm within 2ᵏ; the noise std σΔ exceeds σ times the sensitivity
// by that factor, so the charged multiplier σ stays a lower bound
// (docs/secure-noise.md). Per-block noise (subspace), L∞ and hybrid clips
// and the adaptive clip's split multiplier are refused.
func (m *Mechanism) LatticeNoise(sigma float64, extra, k int) (*LatticeNoise, error) {
	if m.clipper == nil {
		return nil, fmt.Errorf("%w: the mechanism has no clipper to noise", ErrInvalid)
	}
	if m.shape != nil || m.countSB != 0 || (m.spec.Clip != Flat && m.spec.Clip != PerLayer) {
		return nil, fmt.Errorf("%w: lattice noise needs clip flat or per-layer with one noise multiplier", ErrInvalid)
	}
	delta := m.sens.L2
	var layers []float64
	if m.spec.Clip == PerLayer {
		pl, ok := m.clipper.(*clip.PerLayer)
		if !ok {
			return nil, fmt.Errorf("%w: clip per-layer with a %T clipper", ErrInvalid, m.clipper)
		}
		layers = pl.Norms()
		if len(layers) >= 4096 {
			return nil, fmt.Errorf("%w: lattice noise with clip per-layer takes fewer than 4096 layers, got %d", ErrInvalid, len(layers))
		}
		var ss float64
		for _, c := range layers {
			ss += c * c
		}
		delta = math.Sqrt(ss) * (1 + 0x1p-40)
		if !(delta >= m.sens.L2) {
			return nil, fmt.Errorf("%w: per-layer lattice bound %v below the sensitivity %v", ErrInvalid, delta, m.sens.L2)
		}
	}
	d := m.clipper.OutDim() + extra
	nz, err := lattice.New(delta, sigma, d, k)
	if err != nil {
		return nil, err
	}
	s, g := nz.LatticeStd()[0], nz.Gamma()
	return &LatticeNoise{Noise: nz, layers: layers, variance: float64(d) * g * g * (s*s + 1.0/12)}, nil
}

// LayerNorms returns per-layer clipping's bounds C_l, each layer clipped
// with lattice.Noise.ClipFactorTo (nil: flat clipping, ClipFactor).
func (n *LatticeNoise) LayerNorms() []float64 { return n.layers }
