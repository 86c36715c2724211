package trainer

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/rng"
)

// Adaptive clipping (Andrew et al. 2021, "Differentially private learning
// with adaptive clipping"): the clip norm C_t follows a private estimate of
// the γ-quantile of the per-example gradient norms. Each step releases,
// besides the noisy gradient sum, the noisy centred count
//
//	b_t = Σ_{i∈B_t} (1[‖g_i‖ ≤ C_t] − ½) + N(0, σ_b²) (rounded to a half-integer, below),
//
// and updates C_{t+1} = C_t·exp(−η_C·(b_t/m + ½ − γ)), m the expected batch
// size. One record changes the centred count by ½, so the pair (sum/C_t,
// count) is one Gaussian mechanism on the Poisson sample with noise
// multiplier z where z⁻² = z_Δ⁻² + (2σ_b)⁻², z_Δ the gradient's multiplier:
// the step is accounted as one subsampled Gaussian event at the run's σ = z
// (calibrated for the total, as before) and the gradient is noised at
// z_Δ = (z⁻² − (2σ_b)⁻²)^(−½) (Andrew et al. §3.1). This is exact, not a
// bound: the count's release is the second coordinate block of the same
// mechanism, so there is no separate composition loss.
//
// Clipping at C_t is done at the fixed C_0 = clip_norm on gradients scaled
// by r = C_0/C_t (clip_C(g) = clip_{C_0}(r·g)/r): the clipper, the noise
// (std z_Δ·C_0 on the scaled sum) and the sensitivity stay those of C_0, and
// the released sum is divided by r after the noise, giving std z_Δ·C_t.
//
// The count's noise is exact (lattice.CountNoise): 2·count is an integer of
// sensitivity 1, released as 2·count + round(Z'), Z' ~ N(0, (2σ_b)²), and
// halved: the same Gaussian the account charges, rounded to half-integers
// (a post-processing), with no float bits that give the count away.

// Defaults of Andrew et al.'s experiments.
const defaultQuantileLR = 0.2 // the count noise σ_b = m/20 is the mechanism's default

// quantileState is the adaptive clip norm of a run with clip_quantile.
type quantileState struct {
	gamma, eta float64 // target quantile, geometric step
	sigmaB     float64 // std of the count noise
	m          float64 // expected batch size
	c0, c      float64 // clip_norm, current C_t
	zDelta     float64 // the gradient's noise multiplier
	count      float64 // Σ (1[‖g_i‖ ≤ C_t] − ½) this step: a half-integer, exact in float64
	rng        *rng.Stream
	noise      *lattice.CountNoise // std 2σ_b on 2·count
	scratch    []float64
}

// QuantileSigmas splits the total noise multiplier z between the gradient
// (z_Δ) and the centred count of std sigmaB (mechanism.QuantileSigmas).
func QuantileSigmas(z, sigmaB float64) (float64, error) { return mechanism.QuantileSigmas(z, sigmaB) }

// newQuantile builds the adaptive clip state for total multiplier z, with
// the count noise and the gradient's share of z from the mechanism.
func newQuantile(cfg *Config, mech *mechanism.Mechanism, z float64, s *rng.Stream) (*quantileState, error) {
	q := &quantileState{gamma: cfg.ClipQuantile, eta: cfg.QuantileLR, sigmaB: mech.QuantileCountSigma(),
		m: mech.Expected(), c0: cfg.ClipNorm, c: cfg.ClipNorm, rng: s}
	if q.eta == 0 {
		q.eta = defaultQuantileLR
	}
	var err error
	if q.noise, err = newQuantileNoise(q.sigmaB); err != nil {
		return nil, err
	}
	if q.zDelta, err = mech.GradientMultiplier(z); err != nil {
		return nil, err
	}
	return q, nil
}

// newQuantileNoise is the exact noise of std 2σ_b on 2·count.
func newQuantileNoise(sigmaB float64) (*lattice.CountNoise, error) {
	nz, err := lattice.NewCountNoise(2 * sigmaB)
	if err != nil {
		return nil, fmt.Errorf("quantile count noise: %w", err)
	}
	return nz, nil
}

// ratio is r = C_0/C_t, the factor applied to gradients before clipping at C_0.
func (q *quantileState) ratio() float64 { return q.c0 / q.c }

// scales is the norm-only path: clip at C_t through the C_0 clipper and
// count the examples within C_t. normsSq is left unchanged.
func (q *quantileState) scales(nc clip.NormClipper, normsSq []float64, b, k int, scales []float32) clip.Stats {
	return q.scalesObserving(nc, normsSq, b, k, scales, true)
}

// scalesObserving is scales, counting the norms into the step's quantile
// count only when observe is set (a chunk recomputed without its dropped
// examples is counted once, in its first pass).
func (q *quantileState) scalesObserving(nc clip.NormClipper, normsSq []float64, b, k int, scales []float32, observe bool) clip.Stats {
	r := q.ratio()
	if cap(q.scratch) < len(normsSq) {
		q.scratch = make([]float64, len(normsSq))
	}
	sc := q.scratch[:len(normsSq)]
	for i := 0; i < b; i++ {
		var ss float64
		for j := i * k; j < (i+1)*k; j++ {
			sc[j] = normsSq[j] * r * r
			ss += normsSq[j]
		}
		if observe {
			q.observe(math.Sqrt(ss))
		}
	}
	st := nc.Scales(sc, b, scales)
	for j := range scales[:b*k] {
		scales[j] *= float32(r)
	}
	return st
}

// observe adds one example of norm v to the count.
func (q *quantileState) observe(v float64) {
	if v <= q.c { // NaN counts as above
		q.count += 0.5
	} else {
		q.count -= 0.5
	}
}

// scaleRows multiplies b materialised rows of length d by r, counting them.
func (q *quantileState) scaleRows(g []float32, b, d int) {
	r := float32(q.ratio())
	for i := 0; i < b; i++ {
		row := g[i*d : (i+1)*d]
		q.observe(math.Sqrt(clip.SumSquares(row)))
		for j := range row {
			row[j] *= r
		}
	}
}

// finish maps the noised scaled sum back to C_t's scale, releases the noisy
// count and takes the geometric step. It returns the released count
// estimate b_t/m + ½ (the unclipped fraction).
func (q *quantileState) finish(sum []float32) float64 {
	inv := float32(1 / q.ratio())
	for j := range sum {
		sum[j] *= inv
	}
	return q.update(q.release())
}

// release returns the step's noisy centred count, a half-integer, and
// resets the count.
func (q *quantileState) release() float64 {
	twice, _ := q.noise.Release(int64(2*q.count), q.rng) // saturates past 2⁶³ (probability below exp(−2¹⁹))
	q.count = 0
	return float64(twice) / 2
}

// update takes the geometric step for a released centred count.
func (q *quantileState) update(noisyCount float64) float64 {
	frac := noisyCount/q.m + 0.5
	q.c *= math.Exp(-q.eta * (frac - q.gamma))
	return frac
}

// validateQuantile checks the adaptive-clipping settings.
func (c *Config) validateQuantile(bad func(string, ...any)) {
	if c.ClipQuantile == 0 {
		if c.QuantileLR != 0 || c.QuantileCountSigma != 0 {
			bad("quantile_lr and quantile_count_sigma need clip_quantile")
		}
		return
	}
	if !(c.ClipQuantile > 0 && c.ClipQuantile < 1) {
		bad("clip_quantile must be in (0,1) (0 = off), got %v", c.ClipQuantile)
	}
	if !(c.QuantileLR >= 0) || math.IsInf(c.QuantileLR, 0) || !(c.QuantileCountSigma >= 0) || math.IsInf(c.QuantileCountSigma, 0) {
		bad("quantile_lr and quantile_count_sigma must be finite and >= 0 (0 = default), got %v and %v", c.QuantileLR, c.QuantileCountSigma)
	} else if sb := c.QuantileCountSigma; sb > 0 && !(sb >= 0x1p-11 && sb <= 0x1p51) {
		bad("quantile_count_sigma must be in [2^-11, 2^51] (the exact sampler draws std 2·quantile_count_sigma), got %v", sb)
	}
	// Clip kind, sampler, release mode and the clipped count: mechanismErrors.
	if c.AuditCanaries > 0 {
		bad("clip_quantile is not offered in audit runs (the canaries' norm is the fixed clip_norm)")
	}
	if c.DPSGDF {
		bad("clip_quantile is not offered with dpsgdf (its account assumes a fixed clip norm)")
	}
}

// setupRecipes notes augmentation multiplicity and builds the adaptive
// clip state once σ is fixed.
func (s *state) setupRecipes(root *rng.Stream) error {
	cfg := &s.cfg
	if cfg.Augmult > 1 {
		// The augmenter itself belongs to the gradient strategy
		// (newGradients).
		s.notes.public = append(s.notes.public, fmt.Sprintf("augmult K = %d: each example's gradient is the mean over %d random crops (reflect pad %d) and flips, clipped once: sensitivity C as without it", cfg.Augmult, cfg.Augmult, AugPad))
	}
	if cfg.ClipQuantile > 0 {
		q, err := newQuantile(cfg, s.acct.mech, s.sigma, root.Child("clip-quantile"))
		if err != nil {
			return err
		}
		s.quant = q
		s.features = append(s.features, &quantileFeature{q: q})
		s.notes.public = append(s.notes.public, fmt.Sprintf("adaptive clipping to the %g-quantile (η_C = %g, count noise σ_b = %.4g): σ = %.4f accounts gradient and count together; the gradient is noised at z_Δ = %.4f·C_t (Andrew et al. 2021)", q.gamma, q.eta, q.sigmaB, s.sigma, q.zDelta))
	}
	return nil
}

// QuantileApplies reports whether c's clip_quantile is accepted with its
// other settings (clip variant, sampler, ...): the bench applies it to the
// cells where it does.
func QuantileApplies(c Config) bool {
	ok := c.ClipQuantile > 0
	c.validateQuantile(func(string, ...any) { ok = false })
	sp := mechanismSpec(&c, 0, nil)
	return ok && sp.Unsupported() == nil
}

// WithoutQuantile returns c with adaptive clipping off.
func WithoutQuantile(c Config) Config {
	c.ClipQuantile, c.QuantileLR, c.QuantileCountSigma = 0, 0, 0
	return c
}
