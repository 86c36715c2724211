package mechanism

import (
	"errors"
	"fmt"
	"math"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/preprocess"
	"github.com/dptrain/dptrain/rng"
	"github.com/dptrain/dptrain/sampler"
)

// ErrUnsupported is wrapped by every refusal of a combination no accountant
// supports.
var ErrUnsupported = errors.New("no accountant supports this mechanism")

// ErrInvalid is wrapped by every out-of-range parameter.
var ErrInvalid = errors.New("invalid mechanism parameter")

// Spec is one step's mechanism as configured.
type Spec struct {
	Sampler Sampler
	// N is the number of private training records and Batch the (expected)
	// batch size: the sampling rate is q = Batch/N. N may be 0 in Validate
	// (before the data is loaded).
	N, Batch int
	// Rate is the sampling rate q when N is 0: a mechanism that is only
	// accounted (no clipper, no sampler), as the privacy command does.
	Rate float64
	// Q2 is twice sampling's coordinate rate.
	Q2 float64
	// Parts is cyclic sampling's number of parts: the sampling rate within
	// a step's part is then q = Batch·Parts/N, so that the expected batch
	// stays Batch.
	Parts int
	// Bands > 1 correlates the noise across steps by a b-banded strategy
	// (banded matrix factorization, docs/matrix-mechanism.md); 0 or 1 is
	// independent noise.
	Bands int

	Clip Clip
	// C is the clip norm: the L2 sensitivity of one example's contribution
	// (per-layer: split over the layers in proportion to their sizes).
	C float64
	// D0 sets the L∞ bound C/√d0 of hybrid clipping (subspace clipping: of
	// its residual block) and is what the twice-sampling accountant assumes.
	D0 float64
	// SubspaceRanks are subspace clipping's nested cumulative ranks.
	SubspaceRanks []int

	// ClippedCountSigma > 0 releases the count of clipped examples with
	// noise N(0, σ_b²) every step (accounted jointly with the sum).
	ClippedCountSigma float64
	// ClipQuantile > 0 adapts C to that quantile of the gradient norms,
	// releasing a centred count with noise QuantileCountSigma (0: the
	// expected batch size / 20).
	ClipQuantile, QuantileCountSigma float64

	// FinalOnly: only the final model is released (the hidden-state bound's
	// release mode); false: every step's outputs may be released.
	FinalOnly bool
	// Radius > 0 projects the iterates on the L2 ball of that radius, which
	// makes the hidden-state accountant applicable.
	Radius float64

	// Preprocess is the declared sensitivity of a non-private, data-dependent
	// preprocessing (SRDP accounting), or nil; LipschitzMu its Lipschitz
	// constant.
	Preprocess  *preprocess.Sensitivity
	LipschitzMu float64
	// Prefix are the events of private preprocessing (DPSGD-F, private
	// feature statistics) under add/remove-one, charged before step 1.
	Prefix []accountant.Event
}

// Validate refuses, with every reason, out-of-range parameters (wrapping
// ErrInvalid) and the combinations no accountant supports (Unsupported).
func (s Spec) Validate() error {
	var errs []error
	invalid := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...))
	}
	var sv Sampler
	if err := sv.UnmarshalText([]byte(s.Sampler)); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrInvalid, err))
	}
	var cv Clip
	if err := cv.UnmarshalText([]byte(s.Clip)); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrInvalid, err))
	}
	if !(s.C > 0) || math.IsInf(s.C, 0) {
		invalid("clip_norm must be > 0 and finite, got %v", s.C)
	}
	if s.Sampler == Twice && !(s.Q2 > 0 && s.Q2 <= 1) {
		invalid("q2 must be in (0,1] for twice sampling, got %v", s.Q2)
	}
	if (s.Clip == Hybrid || s.Clip == Subspace || s.Sampler == Twice) && (!(s.D0 >= 1) || math.IsInf(s.D0, 0)) {
		invalid("d0 must be >= 1 and finite, got %v", s.D0)
	}
	if s.Sampler == Cyclic && s.Parts < 1 {
		invalid("sampler cyclic needs parts >= 1, got %d", s.Parts)
	}
	if s.Bands < 0 {
		invalid("bands must be >= 1 (1: independent noise), got %d", s.Bands)
	}
	if s.Clip == Subspace && len(s.SubspaceRanks) == 0 {
		invalid("subspace_ranks must list the nested cumulative ranks (e.g. [8,16]) with clip subspace")
	}
	if sb := s.ClippedCountSigma; math.IsNaN(sb) || math.IsInf(sb, 0) || sb < 0 {
		invalid("clipped_count_sigma must be > 0 (0 = no released clipped count), got %v", sb)
	}
	if s.ClipQuantile != 0 && !(s.ClipQuantile > 0 && s.ClipQuantile < 1) {
		invalid("clip_quantile must be in (0,1) (0 = off), got %v", s.ClipQuantile)
	}
	if !(s.QuantileCountSigma >= 0) || math.IsInf(s.QuantileCountSigma, 0) {
		invalid("quantile_count_sigma must be finite and >= 0 (0 = default), got %v", s.QuantileCountSigma)
	}
	return errors.Join(append(errs, s.Unsupported())...)
}

// Unsupported refuses, with every reason, the combinations of sampler, clip,
// released counts, release mode and preprocessing that no accountant
// supports; each error wraps ErrUnsupported.
func (s Spec) Unsupported() error {
	var errs []error
	unsupported := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrUnsupported}, args...)...))
	}
	if s.Bands > 1 {
		switch {
		case s.Sampler == Poisson:
			// MMCC (conditional composition) accounts ordinary Poisson
			// sampling; its PLD-only events and the strategy's conditions
			// (C ≥ 0 on the band, b ≤ bandmf.MMCCMaxBands) are checked when
			// the strategy is known (Mechanism.UseStrategy).
			if s.Preprocess != nil || len(s.Prefix) > 0 {
				unsupported("%d-banded noise under Poisson sampling is accounted by MMCC, which covers the steps only, not preprocessing", s.Bands)
			}
		case s.Sampler != Cyclic || s.Parts < s.Bands:
			unsupported("%d-banded noise is accounted by the amplified banded theorem under sampler cyclic with at least %d parts (an example's steps at least b apart), or by MMCC under ordinary Poisson sampling; got sampler %s with %d parts: "+
				"neither analysis covers it (docs/matrix-mechanism.md)", s.Bands, s.Bands, s.Sampler, s.Parts)
		}
		if s.Clip != Flat && s.Clip != PerLayer {
			unsupported("banded noise is isotropic: clip must be flat or per-layer, got %q", s.Clip)
		}
		if s.Sampler == Poisson && (s.FinalOnly || s.Radius > 0) {
			unsupported("banded noise is not offered with final_only or radius (the hidden-state bound assumes independent noise)")
		}
	}
	if s.Sampler == Cyclic && (s.FinalOnly || s.Radius > 0) {
		unsupported("sampler cyclic is not offered with final_only or radius (the hidden-state bound assumes Poisson sampling and independent noise)")
	}
	if s.Clip == Subspace && (s.Sampler == Shuffle || s.Sampler == WithoutReplacement || s.Sampler == Cyclic) {
		unsupported("clip subspace is accounted by the twice-sampling accountant, which needs sampler poisson or twice, not %s", s.Sampler)
	}
	if s.Preprocess != nil && s.Sampler != Poisson {
		unsupported("preprocessing is accounted by SRDP for Poisson sampling; sampler %q is not supported with it", s.Sampler)
	}
	if s.Preprocess != nil && s.Clip == Subspace {
		unsupported("preprocessing and clip subspace cannot be combined (no SRDP account for per-block noise)")
	}
	if s.ClippedCountSigma > 0 {
		if s.Sampler != Poisson {
			unsupported("clipped_count_sigma is accounted as one Poisson-subsampled Gaussian with the step; it needs sampler poisson, got %q", s.Sampler)
		}
		if s.Clip != Flat && s.Clip != LInf {
			unsupported("clipped_count_sigma needs clip flat or linf (one count per example, the sum's L2 sensitivity C), got %q", s.Clip)
		}
		if s.Preprocess != nil {
			unsupported("clipped_count_sigma cannot be combined with preprocessing (its SRDP account describes the gradient sum only)")
		}
	}
	if s.ClipQuantile > 0 {
		if s.Clip != Flat && s.Clip != PerLayer {
			unsupported("clip_quantile adapts an L2 clip norm: clip must be flat or per-layer, got %q", s.Clip)
		}
		if s.Sampler != Poisson {
			unsupported("clip_quantile is accounted on the Poisson sample: sampler must be poisson, got %q", s.Sampler)
		}
		if s.Radius > 0 || s.FinalOnly {
			unsupported("clip_quantile is not offered with radius or final_only (the hidden-state bound assumes a fixed clip norm)")
		}
		if s.ClippedCountSigma > 0 {
			unsupported("clip_quantile releases its own noisy count; it is not combined with clipped_count_sigma")
		}
		if s.Preprocess != nil {
			unsupported("clip_quantile is not offered with preprocessing (its account assumes a fixed clip norm)")
		}
	}
	return errors.Join(errs...)
}

// Q is the sampling rate Batch/N, or Rate when N is 0 (q1 for twice
// sampling).
func (s Spec) Q() float64 {
	if s.N == 0 {
		return s.Rate
	}
	if s.Sampler == Cyclic {
		return float64(s.Batch) * float64(s.Parts) / float64(s.N)
	}
	return float64(s.Batch) / float64(s.N)
}

// NewSampler returns the spec's sampler over N records (dim: the clipped
// vector's length, for twice sampling's coordinate masks) and the divisor of
// the noisy sum (the expected, never the realised, batch size).
func (s Spec) NewSampler(dim int, r *rng.Stream) (sampler.Sampler, float64, error) {
	switch s.Sampler {
	case Poisson:
		p, err := sampler.NewPoisson(s.N, s.Q(), r)
		if err != nil {
			return nil, 0, err
		}
		return p, p.ExpectedBatch(), nil
	case Twice:
		t, err := sampler.NewTwice(s.N, dim, s.Q(), s.Q2, r)
		if err != nil {
			return nil, 0, err
		}
		return t, t.ExpectedCoordBatch(), nil
	case Shuffle:
		sh, err := sampler.NewShuffle(s.N, s.Batch, r)
		if err != nil {
			return nil, 0, err
		}
		return sh, sh.ExpectedBatch(), nil
	case Cyclic:
		if q := s.Q(); !(q > 0 && q <= 1) {
			return nil, 0, fmt.Errorf("%w: sampler cyclic: the rate within a part, batch·parts/n = %v, must be in (0, 1]: lower the batch or the bands", ErrInvalid, q)
		}
		c, err := sampler.NewCyclicPoisson(s.N, s.Parts, s.Q(), r)
		if err != nil {
			return nil, 0, err
		}
		return c, c.ExpectedBatch(), nil
	case WithoutReplacement:
		w, err := sampler.NewWithoutReplacement(s.N, s.Batch, r)
		if err != nil {
			return nil, 0, err
		}
		return w, w.ExpectedBatch(), nil
	}
	return nil, 0, fmt.Errorf("%w: unknown sampler %q", ErrInvalid, s.Sampler)
}

// NewClipper returns the clipping rule for a model of d parameters in the
// given groups. Subspace clipping needs a basis estimated from public data:
// build it with clip.NewSubspace and SubspaceD0.
func (s Spec) NewClipper(d int, groups []models.Group) (clip.Clipper, error) {
	switch s.Clip {
	case Flat:
		return clip.NewL2(s.C, d, groups)
	case PerLayer:
		return clip.NewPerLayer(s.C, d, groups, clip.GroupSizeWeights(groups))
	case LInf:
		// C is the L2 sensitivity: every coordinate is clamped to C/√D,
		// so the L2 norm of a clipped vector is at most C.
		return clip.NewLInf(s.C/math.Sqrt(float64(d)), d)
	case Hybrid:
		// c∞ = C/√d0. With fewer than d0 parameters the L∞ bound would
		// shrink the L2 sensitivity to √D·C/√d0 and the noise with it,
		// while the twice-sampling account assumes d0 coordinates at noise
		// σ·C: d0 = min(d0, D) keeps the noise and the account one
		// mechanism (hybridD0).
		return clip.NewL2LInf(s.C, hybridD0(s.D0, d), d)
	case Subspace:
		return nil, fmt.Errorf("%w: clip subspace needs a public basis (clip.NewSubspace with SubspaceD0)", ErrInvalid)
	}
	return nil, fmt.Errorf("%w: unknown clip %q", ErrInvalid, s.Clip)
}

func hybridD0(d0 float64, d int) float64 { return math.Min(d0, float64(d)) }

// SubspaceD0 are subspace clipping's per-block d0: none on the principal
// blocks, D0 on the residual.
func (s Spec) SubspaceD0() []float64 {
	d0 := clip.DefaultD0(len(s.SubspaceRanks))
	d0[len(d0)-1] = s.D0
	return d0
}
