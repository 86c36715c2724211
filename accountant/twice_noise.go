package accountant

import (
	"fmt"
	"math"
)

// Optimal anisotropic Gaussian noise for hybrid subspace clipping (paper 003
// Theorem 4.6 and problem (9);
// docs/twice-sampling.md#optimal-anisotropic-noise).

func checkNoiseBlocks(blocks []Block) error {
	if len(blocks) == 0 {
		return invalidf("optimal noise: no blocks")
	}
	for i, b := range blocks {
		if b.Dim < 1 {
			return invalidf("optimal noise: block %d needs a known dimension >= 1, got %d", i, b.Dim)
		}
		if !(b.C2 > 0) || math.IsInf(b.C2, 0) {
			return invalidf("optimal noise: block %d L2 clip must be positive and finite, got %v", i, b.C2)
		}
	}
	return nil
}

// OptimalNoise is Theorem 4.6: for the sensitivity set {(s_1..s_m): s_j ∈
// R^{r_j}, ‖s_j‖₂ ≤ c_2j} the Gaussian noise of least total variance meeting a
// pure-Gaussian RDP target ε(α) is isotropic within each block with
//
//	σ_j = b0·√(c_2j·S/√r_j),   S = Σ_l c_2l·√r_l,   b0² = α/(2ε(α)),
//
// and total variance Σ_j r_j σ_j² = b0²·S².
//
// Inputs: blocks[j].Dim = r_j ≥ 1 (coordinates of block j; the residual block
// in natural coordinates has Dim = d) and blocks[j].C2 = c_2j > 0 (the block's
// L2 clip, absolute, in the same units as the gradients); Sigma and D0 are
// ignored. b0 > 0 sets the privacy level (b0 = 1/√(2ε(α)/α)); pass b0 = 1 to
// get the shape, then scale all σ_j by one factor calibrated with the
// accountant (see [CalibrateHybridNoise]).
// Output: σ_j, the standard deviation of the Gaussian noise added to EACH
// coordinate of block j of the clipped SUM, in the order of blocks.
// Under sample-wise Poisson sampling alone (q2 = 1) this allocation is also
// exactly optimal, with effective multiplier (Σ_j c_2j²/σ_j²)^{−1/2}.
func OptimalNoise(blocks []Block, b0 float64) ([]float64, error) {
	if err := checkNoiseBlocks(blocks); err != nil {
		return nil, err
	}
	if !(b0 > 0) || math.IsInf(b0, 0) {
		return nil, invalidf("optimal noise: b0 must be positive and finite, got %v", b0)
	}
	S := 0.0
	for _, b := range blocks {
		S += b.C2 * math.Sqrt(float64(b.Dim))
	}
	out := make([]float64, len(blocks))
	for j, b := range blocks {
		out[j] = b0 * math.Sqrt(b.C2*S/math.Sqrt(float64(b.Dim)))
	}
	return out, nil
}

// NoiseTotalVariance is E‖e‖² = Σ_j r_j σ_j² for per-block stds sigma.
func NoiseTotalVariance(blocks []Block, sigma []float64) float64 {
	if len(sigma) != len(blocks) {
		panic(fmt.Sprintf("accountant: %d sigmas for %d blocks", len(sigma), len(blocks)))
	}
	t := 0.0
	for j, b := range blocks {
		t += float64(b.Dim) * sigma[j] * sigma[j]
	}
	return t
}

// IsotropicOverHybrid is the ratio of the total variance of isotropic noise
// for the enclosing L2 ball (radius √Σc_2j²) to Theorem 4.6's optimum:
// d·Σ_j c_2j² / (Σ_j c_2j√r_j)².
func IsotropicOverHybrid(blocks []Block) (float64, error) {
	if err := checkNoiseBlocks(blocks); err != nil {
		return 0, err
	}
	var d, c2, S float64
	for _, b := range blocks {
		d += float64(b.Dim)
		c2 += b.C2 * b.C2
		S += b.C2 * math.Sqrt(float64(b.Dim))
	}
	return d * c2 / (S * S), nil
}

// HybridProblem is problem (9) at the (ε, δ) level: per-block noise for
// (Q1, Q2)-twice sampling with hybrid clipping run Steps times, of least
// total variance such that the run is (Epsilon, Delta)-DP. Blocks give Dim,
// C2 and D0 (Sigma is ignored). AlphaMax 0 means 64.
type HybridProblem struct {
	Q1, Q2     float64
	Blocks     []Block
	Steps      int
	Epsilon    float64
	Delta      float64
	AlphaMax   int
	Conversion TwiceConversion
}

func (p HybridProblem) event(sigma []float64) TwiceSampled {
	bs := make([]Block, len(p.Blocks))
	for j, b := range p.Blocks {
		b.Sigma = sigma[j]
		bs[j] = b
	}
	return TwiceSampled{Q1: p.Q1, Q2: p.Q2, Blocks: bs}
}

func (p HybridProblem) alphaMax() int {
	if p.AlphaMax == 0 {
		return 64
	}
	return p.AlphaMax
}

func (p HybridProblem) validate() error {
	if err := checkNoiseBlocks(p.Blocks); err != nil {
		return err
	}
	shape := make([]float64, len(p.Blocks))
	for i := range shape {
		shape[i] = 1
	}
	return p.event(shape).Validate()
}

// scaleFor calibrates the common scale s of sigma = s·rho.
func (p HybridProblem) scaleFor(rho []float64) (float64, error) {
	sig := make([]float64, len(rho))
	if p.Steps < 1 {
		return 0, invalidf("calibration needs steps >= 1, got %d", p.Steps)
	}
	return Calibrate(TwiceCalibration(func(s float64) TwiceSampled {
		for j := range rho {
			sig[j] = s * rho[j]
		}
		return p.event(sig)
	}, p.Steps, p.Delta, p.alphaMax(), p.Conversion), p.Epsilon, WithTolerance(ExactTolerance))
}

// CalibrateHybridNoise is the fast, near-optimal path for problem (9):
// Theorem 4.6's ratios σ_j ∝ √(c_2j/√r_j), scaled by one factor calibrated so
// that the twice-sampled run is exactly (Epsilon, Delta)-DP. It returns the
// per-block stds (noise on each coordinate of the clipped sum) and the total
// variance.
func CalibrateHybridNoise(p HybridProblem) (sigma []float64, total float64, err error) {
	if err := p.validate(); err != nil {
		return nil, 0, err
	}
	rho, err := OptimalNoise(p.Blocks, 1)
	if err != nil {
		return nil, 0, err
	}
	s, err := p.scaleFor(rho)
	if err != nil {
		return nil, 0, err
	}
	sigma = make([]float64, len(rho))
	for j := range rho {
		sigma[j] = s * rho[j]
	}
	return sigma, NoiseTotalVariance(p.Blocks, sigma), nil
}

// OptimizeHybridNoise solves problem (9) numerically
// (docs/twice-sampling.md#optimal-anisotropic-noise): σ_j = s·ρ_j with ρ_m =
// 1, started at Theorem 4.6's ratios; the scale s is calibrated exactly for
// each ρ, and Σ r_j σ_j² is minimised over log ρ_j by coordinate-wise
// golden-section search (three sweeps, tolerance 1e-3 in log ρ). Every
// returned σ is calibrated, so it is private whatever the optimiser's
// accuracy; the objective is flat near the optimum (within ~0.001% of the
// Theorem 4.6 start in the paper's settings).
func OptimizeHybridNoise(p HybridProblem) (sigma []float64, total float64, err error) {
	if err := p.validate(); err != nil {
		return nil, 0, err
	}
	m := len(p.Blocks)
	rho, err := OptimalNoise(p.Blocks, 1)
	if err != nil {
		return nil, 0, err
	}
	last := rho[m-1]
	for j := range rho {
		rho[j] /= last
	}
	objective := func(r []float64) (float64, error) {
		s, err := p.scaleFor(r)
		if err != nil {
			return 0, err
		}
		t := 0.0
		for j, b := range p.Blocks {
			t += float64(b.Dim) * s * s * r[j] * r[j]
		}
		return t, nil
	}
	best, err := objective(rho)
	if err != nil {
		return nil, 0, err
	}
	const gr = 0.6180339887498949
	for sweep := 0; sweep < 3 && m > 1; sweep++ {
		for j := 0; j < m-1; j++ {
			c0 := math.Log(rho[j])
			at := func(x float64) (float64, error) {
				r := append([]float64(nil), rho...)
				r[j] = math.Exp(x)
				return objective(r)
			}
			lo, hi := c0-0.5, c0+0.5
			x1, x2 := hi-gr*(hi-lo), lo+gr*(hi-lo)
			f1, err := at(x1)
			if err != nil {
				return nil, 0, err
			}
			f2, err := at(x2)
			if err != nil {
				return nil, 0, err
			}
			for hi-lo > 1e-3 {
				if f1 <= f2 {
					hi, x2, f2 = x2, x1, f1
					x1 = hi - gr*(hi-lo)
					if f1, err = at(x1); err != nil {
						return nil, 0, err
					}
				} else {
					lo, x1, f1 = x1, x2, f2
					x2 = lo + gr*(hi-lo)
					if f2, err = at(x2); err != nil {
						return nil, 0, err
					}
				}
			}
			x, f := x1, f1
			if f2 < f1 {
				x, f = x2, f2
			}
			if f < best {
				best, rho[j] = f, math.Exp(x)
			}
		}
	}
	s, err := p.scaleFor(rho)
	if err != nil {
		return nil, 0, err
	}
	sigma = make([]float64, m)
	for j := range rho {
		sigma[j] = s * rho[j]
	}
	return sigma, NoiseTotalVariance(p.Blocks, sigma), nil
}

// ResidualD0 is the default d0 (docs/twice-sampling.md#subspace-clipping) =
// (c2/c∞)² of the residual block (c∞ = 0.1·c2, paper 003's experiments).
const ResidualD0 = 100

// HybridBlocks builds the accountant's blocks for hybrid subspace clipping as
// docs/twice-sampling.md#subspace-clipping reads paper 003: cumRanks are
// NESTED cumulative ranks of the principal subspaces (paper: {250, 500, 1000,
// 1500} gives principal blocks of 250, 250, 500 and 500 coordinates), and the
// residual is one block in natural coordinates of R^d (Dim = d, so the
// accountant counts k extra noise dimensions). c2 has one L2 clip per block,
// residual last. Principal blocks get no extra L∞ bound (D0 = 0) and the
// residual D0 = ResidualD0. sigma, if non-nil, gives each block's noise std
// (same order); otherwise Sigma is left 0 for [OptimalNoise] /
// [CalibrateHybridNoise] to fill.
func HybridBlocks(cumRanks []int, d int, c2, sigma []float64) ([]Block, error) {
	m := len(cumRanks) + 1
	if len(c2) != m || (sigma != nil && len(sigma) != m) {
		return nil, invalidf("hybrid blocks: %d ranks need %d clip norms (and sigmas), got %d and %d", len(cumRanks), m, len(c2), len(sigma))
	}
	prev := 0
	blocks := make([]Block, 0, m)
	for i, r := range cumRanks {
		if r <= prev || r > d {
			return nil, invalidf("hybrid blocks: cumulative ranks must increase within (0, d=%d], got %v", d, cumRanks)
		}
		blocks = append(blocks, Block{Dim: r - prev, C2: c2[i]})
		prev = r
	}
	blocks = append(blocks, Block{Dim: d, C2: c2[m-1], D0: ResidualD0})
	for i := range blocks {
		if sigma != nil {
			blocks[i].Sigma = sigma[i]
		}
		if !(blocks[i].C2 > 0) || math.IsInf(blocks[i].C2, 0) {
			return nil, invalidf("hybrid blocks: clip norm %d must be positive and finite, got %v", i, blocks[i].C2)
		}
	}
	return blocks, nil
}
