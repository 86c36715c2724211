package trainer

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/rng"
)

// The released clipped-fraction statistic (Andrew et al. 2021, "Differentially
// private learning with adaptive clipping", Algorithm 1's noised count).
//
// With Config.ClippedCountSigma = σ_b > 0 every step releases
//
//	b̃ = #{examples of the batch whose gradient was clipped} + round(N(0, σ_b²))
//
// to release/metrics.jsonl, with b̃/(qn) as the clipped fraction (qn, the
// expected batch size, is public). Adding or removing one record moves the
// count by at most 1 and the clipped gradient sum by at most C, and both see
// the same Poisson batch, so the step (sum + N(0, σ²C²I), count + N(0, σ_b²))
// is one Poisson-subsampled Gaussian of L2 sensitivity 1 after scaling each
// part by its noise: noise multiplier
//
//	σ_eff = (σ⁻² + σ_b⁻²)^(−1/2)   (< min(σ, σ_b)).
//
// The run's account charges σ_eff at every step, and calibration solves for
// the σ that meets the target ε together with σ_b. Only where the count has
// sensitivity 1 and the sum's account is this Gaussian: Poisson sampling with
// clip flat or linf (per-layer clipping counts example-groups; twice sampling
// and subspace clipping are accounted per coordinate or block; SRDP and the
// per-instance diagnostic rest on the sum alone).
//
// The noise is drawn exactly by lattice.CountNoise: the count is an
// integer, so count + round(Z) = round(count + Z) is a post-processing of
// the Gaussian the account charges, and the released integer carries no
// float bits from which the count could be read (docs/secure-noise.md).

// mechanismErrors names every combination of the step's mechanism that no
// accountant supports (mechanism.Spec.Unsupported; errors.Is finds
// mechanism.ErrUnsupported in each) and a bad clipped-count noise (part of
// Validate).
func (c *Config) mechanismErrors() []error {
	var errs []error
	if sb := c.ClippedCountSigma; math.IsNaN(sb) || math.IsInf(sb, 0) || sb < 0 {
		errs = append(errs, fmt.Errorf("clipped_count_sigma must be > 0 (0 = no released clipped count), got %v", sb))
	} else if sb > 0 && !(sb >= 0x1p-10 && sb <= 0x1p52) {
		errs = append(errs, fmt.Errorf("clipped_count_sigma must be in [2^-10, 2^52] (the exact sampler's range), got %v", sb))
	}
	sp := mechanismSpec(c, 0, nil)
	for _, err := range unwrapJoined(sp.Unsupported()) {
		errs = append(errs, unsupported{err})
	}
	if c.ClippedCountSigma > 0 && c.PerInstance > 0 {
		errs = append(errs, errors.New("clipped_count_sigma cannot be combined with per_instance (the per-instance account describes the gradient sum only)"))
	}
	return errs
}

// unsupported is a mechanism's refusal in Validate: its message without
// the sentinel's prefix (Validate names its section), the refusal itself
// underneath for errors.Is.
type unsupported struct{ err error }

func (u unsupported) Error() string {
	return strings.TrimPrefix(u.err.Error(), mechanism.ErrUnsupported.Error()+": ")
}
func (u unsupported) Unwrap() error { return u.err }

// unwrapJoined lists the errors errors.Join joined (nil: none).
func unwrapJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}

// clipCount releases the noised clipped count of each step.
type clipCount struct {
	sigmaB   float64
	expected float64     // public divisor of the fraction: q·n
	rng      *rng.Stream // a child of the run's root stream ("clipped-count")
	noise    *lattice.CountNoise
}

// newClipCount returns the clipped-count release with noise std sigmaB.
func newClipCount(sigmaB, expected float64, s *rng.Stream) (*clipCount, error) {
	nz, err := lattice.NewCountNoise(sigmaB)
	if err != nil {
		return nil, fmt.Errorf("clipped_count_sigma: %w", err)
	}
	return &clipCount{sigmaB: sigmaB, expected: expected, rng: s, noise: nz}, nil
}

// release returns the step's noised count (an integer) and fraction. The
// sum cannot leave int64 (a batch count plus noise beyond 2⁶² steps has
// probability below exp(−2¹⁹)); Release then saturates.
func (c *clipCount) release(clipped int) (count, frac float64) {
	v, _ := c.noise.Release(int64(clipped), c.rng)
	count = float64(v)
	return count, count / c.expected
}

// clippedCountNote states the released statistic and what the account charges.
func clippedCountNote(sigma, sigmaB float64) string {
	return fmt.Sprintf("clipped count released every step (clipped_count_noised, clipped_frac_noised in release/metrics.jsonl): the count of clipped examples + round(N(0, σ_b²)), an integer drawn exactly (docs/secure-noise.md), σ_b = %g; the account charges each step as one Poisson-subsampled Gaussian at σ_eff = (σ⁻² + σ_b⁻²)^(−1/2) = %.4f (σ = %.4f)", sigmaB, mechanism.JointSigma(sigma, sigmaB), sigma)
}

// checkCountBudget refuses a target ε that the count alone already spends:
// as σ grows σ_eff tends to σ_b, so no σ can meet it.
func (a *accounting) checkCountBudget(steps int) error {
	sb := a.cfg.ClippedCountSigma
	if sb <= 0 {
		return nil
	}
	eps, err := a.epsilonAfter(1e6, steps)
	if err != nil {
		return err
	}
	if eps >= a.cfg.Epsilon {
		return fmt.Errorf("%w: clipped_count_sigma %g alone spends ε ≥ %.4g over %d steps, more than the target ε = %g; raise clipped_count_sigma", ErrInvalidConfig, sb, eps, steps, a.cfg.Epsilon)
	}
	return nil
}
