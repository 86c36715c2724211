package mechanism

import (
	"fmt"

	"github.com/dptrain/dptrain/lattice"
)

// LatticeNoise is the lattice mechanism's noise (docs/secure-noise.md):
// a *lattice.Noise whose clip norm is the mechanism's L2 sensitivity and
// whose std is σ times it, so the event the Mechanism charges (the
// Gaussian mechanism at that sensitivity and multiplier) describes it
// unchanged: the released lattice point is a post-processing of it.
type LatticeNoise struct {
	*lattice.Noise
	variance float64
}

// TotalVariance is E‖e‖² of one draw in parameter units:
// d·γ²·Var(round(Z)), Var(round(Z)) = s² + 1/12 up to a term below
// 2⁻¹⁰⁰ for the lattice std s = σ·2ᵏ ≥ 1 (Sheppard's correction).
func (n *LatticeNoise) TotalVariance() float64 { return n.variance }

// LatticeNoise is the gradient noise at noise multiplier sigma on the
// lattice γℤᵈ, γ = Δ2·2⁻ᵏ, over the clipper's coordinates and extra more
// (an audit's canary block, whose canaries are lattice points of norm
// exactly Δ2). Only an isotropic mechanism whose sensitivity is a flat L2
// bound has one: per-block noise (subspace) and the adaptive clip's split
// multiplier are refused.
func (m *Mechanism) LatticeNoise(sigma float64, extra, k int) (*LatticeNoise, error) {
	if m.clipper == nil {
		return nil, fmt.Errorf("%w: the mechanism has no clipper to noise", ErrInvalid)
	}
	if m.shape != nil || m.countSB != 0 || m.spec.Clip != Flat {
		return nil, fmt.Errorf("%w: lattice noise needs clip flat with one noise multiplier", ErrInvalid)
	}
	d := m.clipper.OutDim() + extra
	nz, err := lattice.New(m.sens.L2, sigma, d, k)
	if err != nil {
		return nil, err
	}
	s, g := nz.LatticeStd()[0], nz.Gamma()
	return &LatticeNoise{Noise: nz, variance: float64(d) * g * g * (s*s + 1.0/12)}, nil
}
