package mechanism

import (
	"fmt"

	"github.com/dptrain/dptrain/bandmf"
	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/rng"
)

// CorrelatedNoise is banded matrix factorization's noise
// (docs/matrix-mechanism.md): step t adds row t of C⁻¹·Z, where Z has
// independent N(0, (σ·Δ2·‖c‖)²) entries and ‖c‖ is the strategy's largest
// column norm, so that C times what the model sees is the released C·x + Z.
// It is stateful: the last b−1 rows are kept (MarshalBinary) and it must
// be asked once per step, in order.
//
// Z is drawn by the isotropic gradient noise (clip.Gaussian) and the
// combination is computed in float64: like the continuous gradient noise,
// this is a named exception to the exact-noise rule (docs/secure-noise.md).
type CorrelatedNoise struct {
	iso      *clip.Gaussian
	corr     *bandmf.Correlator
	buf      []float32
	z        []float64
	variance float64
}

// CorrelatedNoise is the noise of a b-banded run at noise multiplier sigma
// over the clipped vector and extra coordinates, for the strategy s, which
// must have the spec's number of bands.
func (m *Mechanism) CorrelatedNoise(sigma float64, extra int, s bandmf.Strategy, steps int) (*CorrelatedNoise, error) {
	if m.clipper == nil {
		return nil, fmt.Errorf("%w: the mechanism has no clipper to noise", ErrInvalid)
	}
	if s.Bands() != max(m.spec.Bands, 1) {
		return nil, fmt.Errorf("%w: a %d-banded strategy for a %d-banded mechanism", ErrInvalid, s.Bands(), m.spec.Bands)
	}
	z, err := m.GradientMultiplier(sigma)
	if err != nil {
		return nil, err
	}
	d := m.clipper.OutDim() + extra
	std := z * m.sens.L2 * s.MaxColumnNorm(steps)
	iso, err := clip.NewIsotropic(d, std)
	if err != nil {
		return nil, err
	}
	corr, err := bandmf.NewCorrelator(s, d)
	if err != nil {
		return nil, err
	}
	return &CorrelatedNoise{iso: iso, corr: corr, buf: make([]float32, d), z: make([]float64, d),
		variance: float64(d) * std * std}, nil
}

// Add adds the next row of C⁻¹·Z to sum. With one band it is the
// isotropic noise's draw, bit for bit.
func (n *CorrelatedNoise) Add(sum []float32, r *rng.Stream) {
	clear(n.buf)
	n.iso.Add(n.buf, r) // 0 + float32(σ·N): the draw itself
	for i, v := range n.buf {
		n.z[i] = float64(v)
	}
	_ = n.corr.Next(n.z) // lengths match by construction
	for i := range sum {
		sum[i] += float32(n.z[i])
	}
}

// TotalVariance is E‖Z_t‖², the variance of one row of the released
// C·x + Z; the rows of C⁻¹Z the model sees differ from step to step.
func (n *CorrelatedNoise) TotalVariance() float64 { return n.variance }

// MarshalBinary saves the correlator's state: noise, private.
func (n *CorrelatedNoise) MarshalBinary() ([]byte, error) { return n.corr.MarshalBinary() }

// UnmarshalBinary restores it.
func (n *CorrelatedNoise) UnmarshalBinary(b []byte) error { return n.corr.UnmarshalBinary(b) }
