package mechanism

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/bandmf"
	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/rng"
)

// Noise is the noise a step adds to its released clipped sum. Another noise
// (e.g. a discrete Gaussian) can take its place as long as the event the
// Mechanism charges describes it.
type Noise interface {
	// Add adds one draw to sum from r.
	Add(sum []float32, r *rng.Stream)
	// TotalVariance is E‖e‖² of one draw.
	TotalVariance() float64
}

// Mechanism is a validated Spec bound to its clipper: the one source of the
// noise a step adds and the event its accountant charges.
type Mechanism struct {
	spec     Spec
	q        float64
	expected float64 // the divisor of the noisy sum
	perEpoch int     // shuffling: batches per epoch
	clipper  clip.Clipper
	sens     clip.Sensitivity
	d0       float64 // the L∞ dimension the twice-sampling account assumes (1: none)
	shape    []float64
	blocks   []accountant.Block
	countSB  float64 // clip quantile: the centred count's noise std
	prefix   []accountant.Event
	mmcc     *bandmf.MMCC // banded noise under Poisson sampling: its account (UseStrategy)
}

// New validates spec and binds it to c, the clipper built by
// spec.NewClipper (subspace clipping: by clip.NewSubspace). A later clipper
// of the same run (a refreshed subspace basis) must have the same
// sensitivity. c may be nil for a mechanism that is only accounted (Noise
// then fails): the L∞ dimension of hybrid clipping is then D0 itself.
func New(spec Spec, c clip.Clipper) (*Mechanism, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	fixed := spec.Sampler == Shuffle || spec.Sampler == WithoutReplacement
	switch {
	case spec.N == 0 && !fixed && c == nil:
		if !(spec.Rate > 0 && spec.Rate <= 1) {
			return nil, fmt.Errorf("%w: sampling rate must be in (0,1], got %v", ErrInvalid, spec.Rate)
		}
	case spec.N < 1 || spec.Batch < 1 || spec.Batch > spec.N:
		return nil, fmt.Errorf("%w: batch size %d must be in [1, %d] (the training records)", ErrInvalid, spec.Batch, spec.N)
	}
	m := &Mechanism{spec: spec, q: spec.Q(), clipper: c, d0: 1}
	if c != nil {
		m.sens = c.Sensitivity()
	}
	switch spec.Sampler {
	case Poisson:
		m.expected = m.q * float64(spec.N) // as sampler.Poisson.ExpectedBatch
	case Twice:
		m.expected = m.q * spec.Q2 * float64(spec.N)
	case Shuffle:
		m.expected = float64(spec.Batch)
		m.perEpoch = spec.N / spec.Batch
	case WithoutReplacement:
		m.expected = float64(spec.Batch)
	case Cyclic:
		if !(m.q > 0 && m.q <= 1) {
			return nil, fmt.Errorf("%w: sampler cyclic: the rate within a part, batch·parts/n = %v, must be in (0, 1]: lower the batch or the bands", ErrInvalid, m.q)
		}
		m.expected = m.q * float64(spec.N) / float64(spec.Parts) // as sampler.CyclicPoisson.ExpectedBatch
	}
	switch {
	case spec.Clip == LInf && c != nil:
		m.d0 = float64(c.OutDim())
	case spec.Clip == Hybrid && c != nil:
		m.d0 = hybridD0(spec.D0, c.OutDim())
	case spec.Clip == Hybrid:
		m.d0 = spec.D0
	case spec.Clip == LInf:
		return nil, fmt.Errorf("%w: clip linf needs its clipper (the model's dimension)", ErrInvalid)
	case spec.Clip == Subspace:
		if _, ok := c.(*clip.Subspace); !ok {
			return nil, fmt.Errorf("%w: clip subspace needs a *clip.Subspace, got %T", ErrInvalid, c)
		}
		if err := m.shapeSubspace(); err != nil {
			return nil, err
		}
	}
	if spec.ClipQuantile > 0 {
		m.countSB = spec.QuantileCountSigma
		if m.countSB == 0 {
			m.countSB = m.expected / defaultQuantileCountDiv
		}
	}
	m.prefix = spec.Prefix
	if m.Relation() == accountant.ReplaceOne {
		m.prefix = make([]accountant.Event, len(spec.Prefix))
		for i, ev := range spec.Prefix {
			var err error
			if m.prefix[i], err = replaceOne(ev); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
			}
		}
	}
	return m, nil
}

// defaultQuantileCountDiv sets the adaptive clip's count noise σ_b to the
// expected batch size / 20 (Andrew et al. 2021's experiments).
const defaultQuantileCountDiv = 20

// shapeSubspace fixes the per-block noise shape of subspace clipping
// (paper 003 Theorem 4.6), normalised to effective multiplier 1:
// (Σ_j c_2j²/σ_j²)^(-1/2) = 1, so σ keeps its usual meaning under q2 = 1.
func (m *Mechanism) shapeSubspace() error {
	blocks, err := accountantBlocks(m.sens, []float64{1})
	if err != nil {
		return err
	}
	shape, err := accountant.OptimalNoise(blocks, 1)
	if err != nil {
		return fmt.Errorf("subspace noise: %w", err)
	}
	var inv float64
	for j, b := range blocks {
		inv += b.C2 * b.C2 / (shape[j] * shape[j])
	}
	for j := range shape {
		shape[j] *= math.Sqrt(inv)
	}
	m.shape, m.blocks = shape, blocks
	return nil
}

// Spec is the mechanism's specification.
func (m *Mechanism) Spec() Spec { return m.spec }

// Clipper is the clipper the mechanism was bound to.
func (m *Mechanism) Clipper() clip.Clipper { return m.clipper }

// Q is the sampling rate (q1 for twice sampling).
func (m *Mechanism) Q() float64 { return m.q }

// Expected is the divisor of the noisy sum: the expected batch size (twice
// sampling: the expected number of examples per coordinate).
func (m *Mechanism) Expected() float64 { return m.expected }

// BatchesPerEpoch is shuffling's number of batches per epoch (0 otherwise).
func (m *Mechanism) BatchesPerEpoch() int { return m.perEpoch }

// Relation is the neighbouring relation of the account, which follows from
// the sampler: replace-one for fixed-size batches (shuffling, without
// replacement), add/remove-one otherwise.
func (m *Mechanism) Relation() accountant.Relation {
	if m.spec.Sampler == Shuffle || m.spec.Sampler == WithoutReplacement {
		return accountant.ReplaceOne
	}
	return accountant.AddRemove
}

// Prefix are the private preprocessing's events under the run's relation.
func (m *Mechanism) Prefix() []accountant.Event { return m.prefix }

// QuantileCountSigma is the adaptive clip's count noise std σ_b (0 without
// clip_quantile).
func (m *Mechanism) QuantileCountSigma() float64 { return m.countSB }

// GradientMultiplier is the noise multiplier of the gradient sum at total
// multiplier sigma: sigma, or with clip_quantile the z_Δ that leaves the
// rest of sigma to the count, z_Δ⁻² = σ⁻² − (2σ_b)⁻² (Andrew et al. §3.1).
func (m *Mechanism) GradientMultiplier(sigma float64) (float64, error) {
	if m.countSB == 0 {
		return sigma, nil
	}
	return QuantileSigmas(sigma, m.countSB)
}

// QuantileSigmas splits the total noise multiplier z between the gradient
// (z_Δ) and the centred count of std sigmaB (sensitivity ½): z_Δ⁻² =
// z⁻² − (2σ_b)⁻². It fails when the count alone would need more than the
// whole budget (2σ_b ≤ z).
func QuantileSigmas(z, sigmaB float64) (float64, error) {
	if !(z > 0) || !(sigmaB > 0) {
		return 0, fmt.Errorf("clip quantile: noise multiplier %g and count noise %g must be > 0", z, sigmaB)
	}
	inv := 1/(z*z) - 1/(4*sigmaB*sigmaB)
	if !(inv > 0) {
		return 0, fmt.Errorf("clip quantile: count noise σ_b = %g leaves no budget for the gradient at σ = %g (need 2σ_b > σ); raise quantile_count_sigma", sigmaB, z)
	}
	return 1 / math.Sqrt(inv), nil
}

// JointSigma is the noise multiplier of the joint mechanism of the clipped
// sum at multiplier sigma and a released count (sensitivity 1) at
// multiplier sigmaB (0: no count): (σ⁻² + σ_b⁻²)^(−1/2).
func JointSigma(sigma, sigmaB float64) float64 {
	if sigmaB <= 0 {
		return sigma
	}
	return 1 / math.Sqrt(1/(sigma*sigma)+1/(sigmaB*sigmaB))
}

// Noise is the gradient noise at noise multiplier sigma on the clipped
// vector followed by extra coordinates (an audit's canary block, noised by
// the same draw): isotropic with std z·Δ2 (z from GradientMultiplier), or
// subspace clipping's per-block noise σ·shape_j.
func (m *Mechanism) Noise(sigma float64, extra int) (Noise, error) {
	if m.clipper == nil {
		return nil, fmt.Errorf("%w: the mechanism has no clipper to noise", ErrInvalid)
	}
	if m.spec.Bands > 1 {
		return nil, fmt.Errorf("%w: %d-banded noise needs its strategy (CorrelatedNoise)", ErrInvalid, m.spec.Bands)
	}
	if m.shape != nil {
		v := make([]float64, len(m.shape))
		for j, x := range m.shape {
			x *= sigma
			v[j] = x * x
		}
		return clip.BlockNoiseFor(m.clipper, v)
	}
	z, err := m.GradientMultiplier(sigma)
	if err != nil {
		return nil, err
	}
	if extra > 0 {
		return clip.NewIsotropic(m.clipper.OutDim()+extra, z*m.sens.L2)
	}
	return clip.IsotropicFor(m.clipper, z)
}

// Event is one step's mechanism on the data as trained on, at noise
// multiplier sigma, before any preprocessing restatement.
func (m *Mechanism) Event(sigma float64) accountant.Event {
	if m.shape != nil {
		q2 := 1.0
		if m.spec.Sampler == Twice {
			q2 = m.spec.Q2
		}
		blocks := append([]accountant.Block(nil), m.blocks...)
		for j := range blocks {
			blocks[j].Sigma = sigma * m.shape[j]
		}
		return accountant.TwiceSampled{Q1: m.q, Q2: q2, Blocks: blocks}
	}
	switch m.spec.Sampler {
	case Twice:
		return accountant.NewTwiceSampled(m.q, m.spec.Q2, sigma, m.d0)
	case Shuffle:
		// Shuffling cuts a data-independent permutation of the indices into
		// disjoint batches, so replacing one record changes exactly one batch
		// per epoch: by parallel composition an epoch is one Gaussian whose
		// sensitivity is 2C under replace-one (noise σ·C, so multiplier σ/2).
		// Charged at each epoch's first step; no amplification is claimed.
		return accountant.Gaussian{Sigma: sigma / 2}
	case WithoutReplacement:
		// Replace-one moves the sum by up to 2C: multiplier σ/2.
		return accountant.SampledWithoutReplacement{N: m.spec.N, B: m.spec.Batch, Event: accountant.Gaussian{Sigma: sigma / 2}}
	default:
		// With a released clipped count: one Gaussian on (sum, count).
		return accountant.PoissonSampled{Q: m.q, Event: accountant.Gaussian{Sigma: JointSigma(sigma, m.spec.ClippedCountSigma)}}
	}
}

// StepEvent is the event charged for step (1-based) at noise multiplier
// sigma: a NoOp at a shuffled epoch's later steps, restated for the
// preprocessing (SRDP) when it is declared.
func (m *Mechanism) StepEvent(sigma float64, step int) accountant.Event {
	if m.MMCC() {
		if m.mmcc == nil {
			// No strategy yet (UseStrategy): an event every accountant refuses.
			return accountant.MixtureOfGaussians{}
		}
		return m.mmcc.Row(sigma, step-1)
	}
	ev := m.Event(sigma)
	if m.spec.Sampler == Shuffle && (step-1)%m.perEpoch != 0 {
		ev = accountant.NoOp{} // the epoch's Gaussian was charged at its first step
	}
	if m.spec.Sampler == Cyclic && (step-1)%m.spec.Parts != 0 {
		// Part 0 takes part in the most steps, ⌈t/parts⌉ of the first t;
		// charging at its steps makes every prefix's account the amplified
		// banded theorem's (docs/matrix-mechanism.md).
		ev = accountant.NoOp{}
	}
	if m.spec.Preprocess != nil {
		return m.spec.Preprocess.Preprocessed(ev, m.spec.LipschitzMu)
	}
	return ev
}

// Charges is what steps 1..k at sigma cost: one event and how many times it
// is composed (shuffling: once per epoch begun).
func (m *Mechanism) Charges(sigma float64, k int) (accountant.Event, int) {
	if m.MMCC() && m.mmcc != nil {
		return m.mmcc.Event(sigma, k), 1
	}
	if m.spec.Sampler == Shuffle {
		return m.StepEvent(sigma, 1), (k + m.perEpoch - 1) / m.perEpoch
	}
	if m.spec.Sampler == Cyclic {
		return m.StepEvent(sigma, 1), (k + m.spec.Parts - 1) / m.spec.Parts
	}
	return m.StepEvent(sigma, 1), k
}

// NewAccountant returns a fresh accountant of the kind that describes this
// mechanism: SRDP with preprocessing, twice sampling's for twice sampling and
// subspace clipping, RDP under the mechanism's relation otherwise.
func (m *Mechanism) NewAccountant() (accountant.Accountant, error) {
	switch {
	case m.MMCC():
		return accountant.NewPLD() // the mixtures have no RDP (accountant.MixtureOfGaussians)
	case m.spec.Preprocess != nil:
		return accountant.NewSRDP(), nil
	case m.spec.Sampler == Twice || m.spec.Clip == Subspace:
		return accountant.NewTwice(), nil
	case m.Relation() == accountant.ReplaceOne:
		return accountant.NewRDP(accountant.WithRelation(accountant.ReplaceOne))
	default:
		return accountant.NewRDP()
	}
}

// Hidden reports whether the hidden-state accountant describes the run's
// steps: iterates projected on a ball and no private preprocessing (which is
// not a projected SGD step).
func (m *Mechanism) Hidden() bool {
	return m.spec.Radius > 0 && m.spec.Preprocess == nil && len(m.spec.Prefix) == 0
}

// OuterClip reports whether steps clip the mean clipped gradient to C for
// the hidden-state bound. Only where the account rests on the sum's L2
// sensitivity alone: a global rescale is 1-Lipschitz in L2 but not per
// coordinate (twice sampling's L∞ bound) nor per block (subspace clipping's
// anisotropic noise), so there it is not applied and the hidden-state bound
// is marked not applicable.
func (m *Mechanism) OuterClip() bool {
	return m.Hidden() && m.spec.Clip != Subspace && m.spec.Sampler != Twice
}

// HiddenEvent describes one step to the hidden-state accountant: plain SGD,
// noise std in parameter space η·σ·C/E[B], projection diameter 2R. The step
// applies the outer clip, so the bounded update holds; with Poisson batches
// the bound also covers add/remove neighbours.
// A sigma of 0 is no step (a private preprocessing event, which the
// hidden-state account does not see): a NoOp.
func (m *Mechanism) HiddenEvent(sigma, lr float64) accountant.Event {
	if sigma <= 0 {
		return accountant.NoOp{}
	}
	return accountant.ProjectedSGD{P: m.q, Sigma: lr * sigma * m.spec.C / m.expected,
		Clip: m.spec.C, LR: lr, Diameter: 2 * m.spec.Radius, Poisson: m.spec.Sampler == Poisson}
}

// replaceOne restates a private preprocessing event for a replace-one
// account. The preprocessing's Gaussian multipliers are relative to its
// add/remove sensitivity (one record's bounded contribution to a sum);
// replacing a record removes one contribution and adds another, so the sum
// moves by up to twice as much and each multiplier halves.
func replaceOne(ev accountant.Event) (accountant.Event, error) {
	switch e := ev.(type) {
	case accountant.Gaussian:
		return accountant.Gaussian{Sigma: e.Sigma / 2}, nil
	case accountant.NoOp:
		return e, nil
	case accountant.SelfComposed:
		in, err := replaceOne(e.Event)
		if err != nil {
			return nil, err
		}
		return accountant.SelfComposed{Event: in, Count: e.Count}, nil
	case accountant.Composed:
		out := accountant.Composed{Events: make([]accountant.Event, len(e.Events))}
		for i, in := range e.Events {
			var err error
			if out.Events[i], err = replaceOne(in); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("private preprocessing event %T has no replace-one form (use the Poisson sampler)", ev)
}

// D0 is the L∞ dimension the twice-sampling account assumes: min(d0, D)
// for hybrid clipping, D for L∞ clipping, 1 where there is no L∞ bound.
func (m *Mechanism) D0() float64 { return m.d0 }

// MMCC reports whether the steps are accounted by MMCC: banded noise
// (Bands ≥ 2) under ordinary Poisson sampling.
func (m *Mechanism) MMCC() bool { return m.spec.Bands > 1 && m.spec.Sampler == Poisson }

// UseStrategy binds the b-banded strategy of an MMCC run planned for
// steps steps at target delta, so that StepEvent and Charges can describe
// its rows: MMCC spends bandmf.MMCCTailFraction of delta on its posterior
// bounds' failures (docs/matrix-mechanism.md#mmcc). It refuses, wrapping
// ErrUnsupported, a strategy the analysis does not cover.
func (m *Mechanism) UseStrategy(s bandmf.Strategy, steps int, delta float64) error {
	if !m.MMCC() {
		return nil // the banded theorem's event does not depend on C
	}
	if s.Bands() != m.spec.Bands {
		return fmt.Errorf("%w: a %d-banded strategy for a %d-banded mechanism", ErrInvalid, s.Bands(), m.spec.Bands)
	}
	plan, err := bandmf.NewMMCC(s, steps, m.q, delta*bandmf.MMCCTailFraction)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	m.mmcc = &plan
	return nil
}
