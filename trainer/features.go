package trainer

import (
	"fmt"

	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/optim"
)

// feature is an optional part of a run (EMA, canaries, subspace refresh,
// clip quantile, clipped count, per-instance tracking) that plugs into the
// step at the points the step already has, so that the step itself has no
// feature branches (docs/architecture.md#optional-features). A run holds
// the features that are on, in setup order; each hook runs for each of
// them in that order. Hooks a feature does not need come from noHooks.
type feature interface {
	// name is the key of the feature's state in the checkpoint.
	name() string
	// beforeStep runs before step t draws its batch.
	beforeStep(t int) error
	// extraDim is the number of coordinates the feature appends to the
	// released sum; addExtra writes them (released is the whole vector)
	// before the noise is added to all of it.
	extraDim() int
	addExtra(released []float32)
	// afterNoise sees the whole released (noised) vector and the update
	// computed from it so far (at first the model's coordinates), and
	// returns the update the optimizer takes.
	afterNoise(released, update []float32) ([]float32, error)
	// afterUpdate runs after the optimizer step.
	afterUpdate() error
	// record adds the feature's released figures to the step's record.
	record(rec *Record, st *stepStats)
	// save is the feature's checkpoint state; load restores it from the
	// checkpoint of a run at step.
	save() (any, error)
	load(states featureStates, step int) error
	// notes are the feature's curator-only notes for the summary.
	notes() ([]string, error)
}

// noHooks gives a feature the hooks it does not use.
type noHooks struct{}

func (noHooks) beforeStep(int) error                              { return nil }
func (noHooks) extraDim() int                                     { return 0 }
func (noHooks) addExtra([]float32)                                {}
func (noHooks) afterNoise(_, update []float32) ([]float32, error) { return update, nil }
func (noHooks) afterUpdate() error                                { return nil }
func (noHooks) record(*Record, *stepStats)                        {}
func (noHooks) notes() ([]string, error)                          { return nil, nil }

// releaser is a feature that replaces the released parameters (the EMA
// average) for evaluation and model.bin.
type releaser interface {
	releasedParams(p []float32) error
}

// extraDim is the number of coordinates the features append to the sum.
func (s *state) extraDim() int {
	n := 0
	for _, f := range s.features {
		n += f.extraDim()
	}
	return n
}

// emaFeature keeps the average of the iterates; evaluation and model.bin
// use it (post-processing).
type emaFeature struct {
	noHooks
	avg    *optim.EMA
	params func() []float32
}

func (e *emaFeature) name() string                     { return featureEMA }
func (e *emaFeature) afterUpdate() error               { return e.avg.Update(e.params()) }
func (e *emaFeature) releasedParams(p []float32) error { return e.avg.Params(p) }

func (e *emaFeature) save() (any, error) {
	b, err := e.avg.MarshalBinary()
	return emaCheckpoint{State: b}, err
}

func (e *emaFeature) load(states featureStates, step int) error {
	var st emaCheckpoint
	if err := states.get(featureEMA, &st); err != nil {
		return err
	}
	if err := e.avg.UnmarshalBinary(st.State); err != nil {
		return fmt.Errorf("ema: %w", err)
	}
	if e.avg.Steps() != step {
		return fmt.Errorf("the parameter average has taken in %d steps, want %d", e.avg.Steps(), step)
	}
	return nil
}

// canaryFeature is an audit run's gradient canary block: m coordinates
// after the model's, filled before the noise and stepped after it.
type canaryFeature struct {
	noHooks
	c   *gradCanaries
	off int                           // the block's offset in the released vector
	lr  func() (lr, expected float64) // the step's learning rate and divisor
}

func (f *canaryFeature) name() string                { return featureCanaries }
func (f *canaryFeature) extraDim() int               { return f.c.m }
func (f *canaryFeature) addExtra(released []float32) { f.c.addCanaries(released[f.off : f.off+f.c.m]) }

// addLatticeExtra adds this step's canaries (addExtra drew them) to the
// lattice sum: a canary is C·e_j, exactly clipSteps·e_j on the lattice.
func (f *canaryFeature) addLatticeExtra(acc []int64, clipSteps int64) {
	for _, j := range f.c.hits {
		acc[f.off+j] += clipSteps
	}
}

func (f *canaryFeature) afterNoise(released, update []float32) ([]float32, error) {
	lr, expected := f.lr()
	f.c.step(released[f.off:f.off+f.c.m], lr, expected)
	return update, nil
}

func (f *canaryFeature) save() (any, error) {
	st := canaryCheckpoint{Params: float32Bytes(f.c.params), Counts: f.c.counts}
	var err error
	st.RNG, err = f.c.sample.MarshalBinary()
	return st, err
}

func (f *canaryFeature) load(states featureStates, _ int) error {
	var st canaryCheckpoint
	if err := states.get(featureCanaries, &st); err != nil {
		return err
	}
	c := f.c
	if err := setFloat32s(c.params, st.Params); err != nil || len(st.Counts) != c.m {
		return fmt.Errorf("canary block does not match %d canaries", c.m)
	}
	copy(c.counts, st.Counts)
	if err := c.sample.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("canaries: %w", err)
	}
	return nil
}

// quantileFeature is adaptive clipping's step: after the noise it brings
// the released sum back to C_t's scale and moves C. Its other hook is
// narrower than this interface: the gradient strategies rescale each row
// before clipping through state.quant (clip quantile rescales rows, which
// no step point can do from outside the strategy).
type quantileFeature struct {
	noHooks
	q *quantileState
}

func (f *quantileFeature) name() string { return featureQuantile }

func (f *quantileFeature) afterNoise(released, update []float32) ([]float32, error) {
	f.q.finish(released) // back to C_t's scale; noisy count, next C
	return update, nil
}

func (f *quantileFeature) save() (any, error) {
	st := quantileCheckpoint{ClipNow: f.q.c}
	var err error
	st.RNG, err = f.q.rng.MarshalBinary()
	return st, err
}

func (f *quantileFeature) load(states featureStates, _ int) error {
	var st quantileCheckpoint
	if err := states.get(featureQuantile, &st); err != nil {
		return err
	}
	if !(st.ClipNow > 0) {
		return fmt.Errorf("holds no adaptive clip norm")
	}
	f.q.c = st.ClipNow
	if err := f.q.rng.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("clip quantile: %w", err)
	}
	return nil
}

// countFeature releases each step's noised clipped count in its record.
type countFeature struct {
	noHooks
	c *clipCount
}

func (f *countFeature) name() string { return featureClippedCount }

func (f *countFeature) record(rec *Record, st *stepStats) {
	c, frac := f.c.release(st.clipped)
	rec.ClippedCountNoised, rec.ClippedFracNoised = &c, &frac
}

func (f *countFeature) save() (any, error) {
	b, err := f.c.rng.MarshalBinary()
	return rngState{RNG: b}, err
}

func (f *countFeature) load(states featureStates, _ int) error {
	var st rngState
	if err := states.get(featureClippedCount, &st); err != nil {
		return err
	}
	if err := f.c.rng.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("clipped-count noise: %w", err)
	}
	return nil
}

// subspaceFeature refreshes the principal basis every SubspaceRefresh steps
// and maps the released [coefficients | residual] back to parameter space.
type subspaceFeature struct {
	noHooks
	s       *state
	refresh int
}

func (f *subspaceFeature) name() string { return featureSubspace }

func (f *subspaceFeature) beforeStep(t int) error {
	if f.refresh > 0 && t > 1 && (t-1)%f.refresh == 0 {
		return f.s.refreshBasis(t - 1)
	}
	return nil
}

func (f *subspaceFeature) afterNoise(_, update []float32) ([]float32, error) {
	sub := f.s.sub
	f.s.clipper.(*clip.Subspace).Decode(sub.decoded, update)
	return sub.decoded, nil
}

func (f *subspaceFeature) save() (any, error) {
	return subspaceCheckpoint{f.s.sub.basisAt, float32Bytes(f.s.sub.basisFrom)}, nil
}

func (f *subspaceFeature) load(states featureStates, _ int) error {
	var st subspaceCheckpoint
	if err := states.get(featureSubspace, &st); err != nil {
		return err
	}
	from := make([]float32, f.s.model.NumParams())
	if err := setFloat32s(from, st.BasisFrom); err != nil {
		return fmt.Errorf("basis: %w", err)
	}
	return f.s.restoreBasis(st.BasisAt, from)
}

// instanceFeature tracks the gradient norms of the first PerInstance
// training examples before every step, for their per-instance ε.
type instanceFeature struct {
	noHooks
	s       *state
	norms   [][]float64 // [step][example]
	normsSq []float64   // one chunk's per-sample, per-group squared norms
}

func (f *instanceFeature) name() string { return featurePerInstance }

func (f *instanceFeature) beforeStep(int) error {
	if f.normsSq == nil {
		f.normsSq = make([]float64, f.s.model.MaxBatch()*len(f.s.model.Groups()))
	}
	row, err := f.s.instanceNorms(f.normsSq)
	if err != nil {
		return err
	}
	f.norms = append(f.norms, row)
	return nil
}

func (f *instanceFeature) save() (any, error) { return instanceCheckpoint{f.norms}, nil }

func (f *instanceFeature) load(states featureStates, step int) error {
	var st instanceCheckpoint
	if err := states.get(featurePerInstance, &st); err != nil {
		return err
	}
	if len(st.Norms) != step {
		return fmt.Errorf("holds %d steps of per-instance norms, want %d", len(st.Norms), step)
	}
	f.norms = st.Norms
	return nil
}

func (f *instanceFeature) notes() ([]string, error) { return f.s.instanceReport(f.norms) }
