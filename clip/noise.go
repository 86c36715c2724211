package clip

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/rng"
)

// Gaussian is zero-mean Gaussian noise on a released sum, isotropic within
// each of consecutive blocks: block j covers sizes[j] coordinates with
// standard deviation std[j]. One block is isotropic noise.
type Gaussian struct {
	sizes []int
	std   []float64
	n     int
}

// NewIsotropic returns N(0, std² I_n).
func NewIsotropic(n int, std float64) (*Gaussian, error) {
	return NewBlockGaussian([]int{n}, []float64{std * std})
}

// IsotropicFor returns the isotropic noise for clipper c with noise
// multiplier z: std = z × the L2 sensitivity, over c's released vector.
func IsotropicFor(c Clipper, z float64) (*Gaussian, error) {
	if err := checkPositive("noise multiplier", z); err != nil {
		return nil, err
	}
	return NewIsotropic(c.OutDim(), z*c.Sensitivity().L2)
}

// NewBlockGaussian returns per-block noise: block j has sizes[j]
// coordinates, each N(0, variances[j]). This is the anisotropic noise of
// paper 003 Theorem 4.6 / problem (9) when the variances come from the
// accountant's optimal-noise solver.
func NewBlockGaussian(sizes []int, variances []float64) (*Gaussian, error) {
	if len(sizes) == 0 || len(sizes) != len(variances) {
		return nil, fmt.Errorf("clip: noise needs one variance per block, got %d blocks and %d variances", len(sizes), len(variances))
	}
	g := &Gaussian{sizes: append([]int(nil), sizes...), std: make([]float64, len(sizes))}
	for j, v := range variances {
		if sizes[j] < 1 {
			return nil, fmt.Errorf("clip: noise block %d has size %d", j, sizes[j])
		}
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("clip: noise variance of block %d must be positive and finite, got %v", j, v)
		}
		g.std[j] = math.Sqrt(v)
		g.n += sizes[j]
	}
	return g, nil
}

// BlockNoiseFor returns per-block noise laid out on c's sensitivity blocks
// (for Subspace: the principal blocks then the residual), with the given
// per-block variances.
func BlockNoiseFor(c Clipper, variances []float64) (*Gaussian, error) {
	bl := c.Sensitivity().Blocks
	sizes := make([]int, len(bl))
	for i, b := range bl {
		sizes[i] = b.Dim
	}
	return NewBlockGaussian(sizes, variances)
}

// Len is the number of coordinates the noise covers.
func (g *Gaussian) Len() int { return g.n }

// Std returns the per-block standard deviations.
func (g *Gaussian) Std() []float64 { return append([]float64(nil), g.std...) }

// TotalVariance is E‖e‖² = Σ_j sizes[j]·std[j]².
func (g *Gaussian) TotalVariance() float64 {
	var t float64
	for j, s := range g.std {
		t += float64(g.sizes[j]) * s * s
	}
	return t
}

// Add adds one fresh noise draw to sum (length Len), from s.
func (g *Gaussian) Add(sum []float32, s *rng.Stream) {
	if len(sum) != g.n {
		panic(fmt.Sprintf("clip: noise over %d coordinates, sum has %d", g.n, len(sum)))
	}
	off := 0
	for j, n := range g.sizes {
		s.AddNormal(sum[off:off+n], g.std[j])
		off += n
	}
}
