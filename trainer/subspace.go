package trainer

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/internal/rng"
	"github.com/dptrain/dptrain/models"
)

// subspaceState is hybrid subspace clipping (paper 003): a principal basis
// estimated from PUBLIC per-sample gradients, per-block L2 budgets, and
// per-block Gaussian noise shaped by Theorem 4.6 and scaled by σ.
type subspaceState struct {
	public    []float32 // public examples' features (declared public: no protection)
	publicY   []int
	publicN   int
	c2, d0    []float64
	shape     []float64          // per-block noise std at σ = 1 (effective multiplier 1)
	blocks    []accountant.Block // per-block Dim, C2, D0 for the accountant (Sigma set per σ)
	basisAt   int                // step after which the current basis was computed (0: initial model)
	basisFrom []float32          // parameters the current basis was computed at
	decoded   []float32          // the noisy sum mapped back to parameter space
	rootSeed  *rng.Stream
}

// setupSubspace splits the declared-public examples off the training set,
// estimates the basis at the initial parameters, allocates the budgets and
// shapes the noise.
func (s *state) setupSubspace(root *rng.Stream) error {
	cfg := &s.cfg
	train := s.data.train
	if cfg.PublicN < 1 || cfg.PublicN >= train.N() {
		return fmt.Errorf("subspace clipping: public_n must be in [1, %d), got %d", train.N(), cfg.PublicN)
	}
	// A seeded choice of public examples; they are removed from the private
	// set, so they are never sampled and never accounted.
	perm := rng.NewSeeded(cfg.Seed).Child("public").Perm(train.N())
	pub, priv := perm[:cfg.PublicN], perm[cfg.PublicN:]
	sub := &subspaceState{publicN: cfg.PublicN, rootSeed: root}
	pubSet := train.Subset(pub)
	sub.public, sub.publicY = pubSet.X, pubSet.Y
	s.data.train = train.Subset(priv)
	s.sub = sub
	s.notes = append(s.notes, fmt.Sprintf("subspace clipping: %d training examples declared public (basis estimation only, no privacy protection), %d private", cfg.PublicN, len(priv)))

	d := s.model.NumParams()
	grads, err := s.publicGrads()
	if err != nil {
		return err
	}
	sizes, err := clip.NestedBlockSizes(cfg.SubspaceRanks)
	if err != nil {
		return fmt.Errorf("subspace clipping: %w", err)
	}
	basis, err := clip.PrincipalBasis(grads, cfg.PublicN, d, sizes, cfg.PowerIters, root.Child("basis-0"))
	if err != nil {
		return fmt.Errorf("subspace clipping: %w", err)
	}
	if sub.c2, err = clip.AllocateBudgets(grads, cfg.PublicN, basis, cfg.ClipNorm); err != nil {
		return fmt.Errorf("subspace clipping: %w", err)
	}
	sub.d0 = clip.DefaultD0(len(sizes))
	sub.d0[len(sub.d0)-1] = cfg.D0
	cl, err := clip.NewSubspace(basis, sub.c2, sub.d0)
	if err != nil {
		return fmt.Errorf("subspace clipping: %w", err)
	}
	s.clipper = cl
	sub.basisFrom = append([]float32(nil), s.model.Params()...)
	sub.decoded = make([]float32, d)

	// Theorem 4.6's shape, normalised to effective multiplier 1:
	// (Σ_j c_2j²/σ_j²)^(-1/2) = 1, so σ keeps its usual meaning under q2 = 1.
	blocks, err := cl.Sensitivity().AccountantBlocks([]float64{1})
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
	sub.shape, sub.blocks = shape, blocks
	return nil
}

// publicGrads returns the public examples' per-sample gradients at the
// current parameters (publicN × D).
func (s *state) publicGrads() ([]float32, error) {
	sub, m := s.sub, s.model
	d, in, mb := m.NumParams(), m.InputSize(), m.MaxBatch()
	grads := make([]float32, sub.publicN*d)
	losses := make([]float32, mb)
	for off := 0; off < sub.publicN; off += mb {
		b := min(mb, sub.publicN-off)
		batch := models.Batch{X: sub.public[off*in : (off+b)*in], Y: sub.publicY[off : off+b], N: b}
		if err := m.PerSampleGrads(batch, grads[off*d:(off+b)*d], losses[:b]); err != nil {
			return nil, fmt.Errorf("public gradients: %w", err)
		}
	}
	return grads, nil
}

// refreshBasis re-estimates the principal basis at the current parameters
// (public data only: no privacy cost). Budgets and noise stay fixed, so the
// accountant's event does not change.
func (s *state) refreshBasis(step int) error {
	sub := s.sub
	grads, err := s.publicGrads()
	if err != nil {
		return err
	}
	sizes, _ := clip.NestedBlockSizes(s.cfg.SubspaceRanks)
	basis, err := clip.PrincipalBasis(grads, sub.publicN, s.model.NumParams(), sizes, s.cfg.PowerIters, sub.rootSeed.Child(fmt.Sprintf("basis-%d", step)))
	if err != nil {
		return fmt.Errorf("subspace refresh at step %d: %w", step, err)
	}
	cl, err := clip.NewSubspace(basis, sub.c2, sub.d0)
	if err != nil {
		return err
	}
	s.clipper = cl
	sub.basisAt = step
	sub.basisFrom = append(sub.basisFrom[:0], s.model.Params()...)
	return nil
}

// restoreBasis recomputes the basis a checkpoint's run was using, from the
// parameters it was computed at.
func (s *state) restoreBasis(at int, from []float32) error {
	if at == 0 {
		return nil // the initial basis, already computed at the same parameters
	}
	cur := append([]float32(nil), s.model.Params()...)
	copy(s.model.Params(), from)
	err := s.refreshBasis(at)
	copy(s.model.Params(), cur)
	return err
}

// event describes one step at σ to the twice-sampling accountant: sample-wise
// rate q1, coordinate rate q2 (1 without twice sampling), per-block noise.
func (sub *subspaceState) event(q1, q2, sigma float64) accountant.Event {
	blocks := append([]accountant.Block(nil), sub.blocks...)
	for j := range blocks {
		blocks[j].Sigma = sigma * sub.shape[j]
	}
	return accountant.TwiceSampled{Q1: q1, Q2: q2, Blocks: blocks}
}

// blockSigmas are the per-block noise stds on the released sum at σ.
func (s *state) blockSigmas(sigma float64) []float64 {
	out := make([]float64, len(s.sub.shape))
	for j, v := range s.sub.shape {
		out[j] = sigma * v
	}
	return out
}

// buildNoise returns isotropic noise σ·Δ2, or the subspace run's per-block noise.
func (s *state) buildNoise() (*clip.Gaussian, error) {
	if s.sub == nil {
		return clip.IsotropicFor(s.clipper, s.sigma)
	}
	sig := s.blockSigmas(s.sigma)
	v := make([]float64, len(sig))
	for j, x := range sig {
		v[j] = x * x
	}
	return clip.BlockNoiseFor(s.clipper, v)
}
