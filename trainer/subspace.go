package trainer

import (
	"fmt"

	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/rng"
)

// subspaceState is hybrid subspace clipping (paper 003): a principal basis
// estimated from PUBLIC per-sample gradients and per-block L2 budgets; the
// per-block noise and the event come from the run's mechanism.
type subspaceState struct {
	public    []float32 // public examples' features (declared public: no protection)
	publicY   []int
	publicN   int
	carved    int // records carved out of the training set as public (0 with a separate public dataset)
	c2, d0    []float64
	basisAt   int       // step after which the current basis was computed (0: initial model)
	basisFrom []float32 // parameters the current basis was computed at
	decoded   []float32 // the noisy sum mapped back to parameter space
	rootSeed  *rng.Stream
}

// setupSubspace splits the declared-public examples off the training set,
// estimates the basis at the initial parameters, allocates the budgets and
// builds the clipper.
func (s *state) setupSubspace(root *rng.Stream) error {
	cfg := &s.cfg
	train := s.data.train
	sub := &subspaceState{publicN: cfg.PublicN, rootSeed: root}
	pubSet, err := s.publicSet()
	if err != nil {
		return err
	}
	sub.public, sub.publicY = pubSet.X, pubSet.Y
	s.sub = sub
	if cfg.PublicData == "" {
		// Carved out: the first public_n records in the dataset's stored
		// order (fixed independently of n, so adding or removing another
		// record does not change the public set). They are removed from
		// the private set, never sampled and never accounted: the claim
		// covers the remaining records only.
		sub.carved = cfg.PublicN
		s.data.train = train.Subset(seqFrom(cfg.PublicN, train.N()))
		s.notes.public = append(s.notes.public, fmt.Sprintf("subspace clipping: the first %d training records are declared public (basis estimation only, NO privacy protection); the claim covers the other %d", cfg.PublicN, s.data.train.N()))
	} else {
		s.notes.public = append(s.notes.public, fmt.Sprintf("subspace clipping: basis estimated from %d records of the public dataset %q (not the training set)", cfg.PublicN, cfg.PublicData))
	}

	d := s.model.NumParams()
	basis, err := s.estimateBasis(0)
	if err != nil {
		return fmt.Errorf("subspace clipping: %w", err)
	}
	rows, chunk := s.publicRows()
	if sub.c2, err = clip.AllocateBudgetsFrom(rows, cfg.PublicN, chunk, basis, cfg.ClipNorm); err != nil {
		return fmt.Errorf("subspace clipping: %w", err)
	}
	sub.d0 = mechanismSpec(cfg, 0, nil).SubspaceD0()
	cl, err := clip.NewSubspace(basis, sub.c2, sub.d0)
	if err != nil {
		return fmt.Errorf("subspace clipping: %w", err)
	}
	s.clipper = cl
	sub.basisFrom = append([]float32(nil), s.model.Params()...)
	sub.decoded = make([]float32, d)
	s.features = append(s.features, &subspaceFeature{s: s, refresh: cfg.SubspaceRefresh})
	return nil
}

// publicRows produces the public examples' per-sample gradients at the
// current parameters a chunk of max_physical_batch at a time, in the
// materialised path's gradient buffer (between steps it is free), so the
// basis and the budgets never hold all public_n gradients at once: the
// source is called once per power iteration, and the gradients are
// recomputed each time (they are the same at fixed parameters).
func (s *state) publicRows() (rows clip.RowSource, chunk int) {
	sub, m := s.sub, s.model
	d, in, mb := m.NumParams(), m.InputSize(), m.MaxBatch()
	if len(s.batches.rows) < mb*d {
		s.batches.rows = make([]float32, mb*d) // allocate keeps it
	}
	losses := make([]float32, mb)
	pb := batchBuilder{regression: s.batches.regression} // its own targets: a refresh may interleave with a step's chunk
	return func(lo, hi int) ([]float32, error) {
		b := hi - lo
		batch := pb.batch(sub.public[lo*in:hi*in], sub.publicY[lo:hi])
		g := s.batches.rows[:b*d]
		if err := m.PerSampleGrads(batch, g, losses[:b]); err != nil {
			return nil, fmt.Errorf("public gradients: %w", err)
		}
		return g, nil
	}, mb
}

// estimateBasis computes the principal basis at the current parameters from
// the public examples, from the stream of the step it is estimated at.
func (s *state) estimateBasis(step int) (*clip.Basis, error) {
	sizes, err := clip.NestedBlockSizes(s.cfg.SubspaceRanks)
	if err != nil {
		return nil, err
	}
	rows, chunk := s.publicRows()
	return clip.PrincipalBasisFrom(rows, s.sub.publicN, s.model.NumParams(), chunk, sizes, s.cfg.PowerIters, s.sub.rootSeed.Child(fmt.Sprintf("basis-%d", step)))
}

// refreshBasis re-estimates the principal basis at the current parameters
// (public data only: no privacy cost). Budgets and noise stay fixed, so the
// accountant's event does not change.
func (s *state) refreshBasis(step int) error {
	sub := s.sub
	basis, err := s.estimateBasis(step)
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

// buildNoise returns the mechanism's noise at the run's σ, over the clipped
// vector and the audit's canary block.
func (s *state) buildNoise() (mechanism.Noise, error) {
	if s.opts.Noise != nil {
		return s.opts.Noise, nil // a test's negative control
	}
	sigma := s.sigma
	if h := testAuditHooks; h != nil && h.noiseScale > 0 {
		sigma *= h.noiseScale // negative control: the account keeps σ
	}
	if s.cfg.usesLattice() {
		lat, err := s.acct.mech.LatticeNoise(sigma, s.extraDim(), lattice.DefaultK)
		if err != nil {
			return nil, err
		}
		if int64(s.cfg.BatchSize) > lat.MaxExamples()/4 {
			return nil, fmt.Errorf("noise lattice: batch %d is too large for the int64 sum at k = %d", s.cfg.BatchSize, lattice.DefaultK)
		}
		return lat, nil
	}
	for _, f := range s.features {
		if b, ok := f.(*bandmfFeature); ok {
			return s.acct.mech.CorrelatedNoise(sigma, s.extraDim(), b.strategy, s.steps)
		}
	}
	return s.acct.mech.Noise(sigma, s.extraDim())
}

// publicSet returns the public examples for the subspace basis: PublicN
// records of Config.PublicData ("test": the first PublicN test records,
// which then leave the evaluation set), or else the first PublicN training
// records.
func (s *state) publicSet() (*datasets.Dataset, error) {
	cfg := &s.cfg
	train := s.data.train
	var pool *datasets.Dataset
	switch cfg.PublicData {
	case "":
		if cfg.PublicN < 1 || cfg.PublicN >= train.N() {
			return nil, fmt.Errorf("subspace clipping: public_n must be in [1, %d), got %d", train.N(), cfg.PublicN)
		}
		return train.Subset(seq(cfg.PublicN)), nil
	case "test":
		test := s.data.test
		if cfg.PublicN < 1 || cfg.PublicN >= test.N() {
			return nil, fmt.Errorf("subspace clipping: public_n must be in [1, %d) with public_data test, got %d", test.N(), cfg.PublicN)
		}
		s.data.test = test.Subset(seqFrom(cfg.PublicN, test.N()))
		s.notes.public = append(s.notes.public, fmt.Sprintf("public_data test: the first %d test records estimate the basis; the other %d evaluate", cfg.PublicN, s.data.test.N()))
		return test.Subset(seq(cfg.PublicN)), nil
	default:
		l, _, err := loadNamed(cfg.PublicData, cfg)
		if err != nil {
			return nil, fmt.Errorf("public_data: %w", err)
		}
		pool = l.Train
	}
	if pool.Dim() != train.Dim() {
		return nil, fmt.Errorf("public_data %s has %d features per record; the training data has %d", cfg.PublicData, pool.Dim(), train.Dim())
	}
	if cfg.PublicN < 1 || cfg.PublicN > pool.N() {
		return nil, fmt.Errorf("subspace clipping: public_n must be in [1, %d] with public_data %s, got %d", pool.N(), cfg.PublicData, cfg.PublicN)
	}
	return pool.Subset(seq(cfg.PublicN)), nil
}
