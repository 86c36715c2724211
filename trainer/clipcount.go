package trainer

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/internal/rng"
)

// The released clipped-fraction statistic (Andrew et al. 2021, "Differentially
// private learning with adaptive clipping", Algorithm 1's noised count).
//
// With Config.ClippedCountSigma = σ_b > 0 every step releases
//
//	b̃ = #{examples of the batch whose gradient was clipped} + N(0, σ_b²)
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

// jointSigma is the noise multiplier of the joint mechanism of the clipped
// sum at multiplier sigma and a count at multiplier sigmaB (0: no count).
func jointSigma(sigma, sigmaB float64) float64 {
	if sigmaB <= 0 {
		return sigma
	}
	return 1 / math.Sqrt(1/(sigma*sigma)+1/(sigmaB*sigmaB))
}

// clippedCountErrors names every setting the released clipped count cannot
// be combined with (part of Validate).
func (c *Config) clippedCountErrors() []string {
	sb := c.ClippedCountSigma
	if sb == 0 {
		return nil
	}
	if math.IsNaN(sb) || math.IsInf(sb, 0) || sb < 0 {
		return []string{fmt.Sprintf("clipped_count_sigma must be > 0 (0 = no released clipped count), got %v", sb)}
	}
	var errs []string
	if c.Sampler != "poisson" {
		errs = append(errs, fmt.Sprintf("clipped_count_sigma is accounted as one Poisson-subsampled Gaussian with the step; it needs sampler poisson, got %q", c.Sampler))
	}
	if c.Clip != "flat" && c.Clip != "linf" {
		errs = append(errs, fmt.Sprintf("clipped_count_sigma needs clip flat or linf (one count per example, the sum's L2 sensitivity C), got %q", c.Clip))
	}
	if c.Preprocess != "" {
		errs = append(errs, fmt.Sprintf("clipped_count_sigma cannot be combined with preprocess %s (its SRDP account describes the gradient sum only)", c.Preprocess))
	}
	if c.PerInstance > 0 {
		errs = append(errs, "clipped_count_sigma cannot be combined with per_instance (the per-instance account describes the gradient sum only)")
	}
	return errs
}

// clipCount releases the noised clipped count of each step.
type clipCount struct {
	sigmaB   float64
	expected float64     // public divisor of the fraction: q·n
	rng      *rng.Stream // a child of the run's root stream ("clipped-count")
}

// release returns the step's noised count and fraction.
func (c *clipCount) release(clipped int) (count, frac float64) {
	count = float64(clipped) + c.sigmaB*c.rng.NormFloat64()
	return count, count / c.expected
}

// clippedCountNote states the released statistic and what the account charges.
func clippedCountNote(sigma, sigmaB float64) string {
	return fmt.Sprintf("clipped count released every step (clipped_count_noised, clipped_frac_noised in release/metrics.jsonl): the count of clipped examples + N(0, σ_b²), σ_b = %g; the account charges each step as one Poisson-subsampled Gaussian at σ_eff = (σ⁻² + σ_b⁻²)^(−1/2) = %.4f (σ = %.4f)", sigmaB, jointSigma(sigma, sigmaB), sigma)
}

// hiddenCountReason marks the hidden-state bound not applicable: the count is
// an intermediate release its analysis does not cover.
const hiddenCountReason = "the run releases a noised clipped count at every step, which the hidden-state analysis (last iterate only) does not cover"

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
