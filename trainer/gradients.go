package trainer

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/sampler"
)

// gradients is the run's one gradient value: the strategy chosen once at
// setup (newGradients) with the buffers it alone uses. It computes one
// chunk's per-sample gradients, clips them into the step's sum and records
// the chunk's losses, norms and clip counts; it reduces what it keeps
// besides the float sum over ranks and makes the step's release. Every
// strategy adds the same clipped sum up to float rounding; they differ in
// what they materialise.
type gradients interface {
	// start prepares a step (augmentation draws its crops per step).
	start(step int)
	// chunkLen is the number of examples one chunk takes.
	chunkLen() int
	// chunk clips the examples idx into sum.
	chunk(idx []int, sum []float32, st *stepStats) error
	// reduce sums over ranks what the strategy keeps besides the sum.
	reduce(r Reducer) error
	// release adds the mechanism's noise to the reduced sum in place: the
	// step's one noise call.
	release(sum []float32) error
}

// newGradients chooses the run's gradient strategy, once, and allocates its
// buffers: lattice noise (its own exact sum and release), augmentation
// multiplicity, the norm-only path (per-sample norms, then one scaled
// backward pass), the factored path (Linear-only models clipped from their
// factors), the layered path (conv nets clipped from the engine's
// per-layer per-sample gradients in place), or materialised per-sample
// gradients.
func (s *state) newGradients() (gradients, error) {
	mb, d, k := s.model.MaxBatch(), s.model.NumParams(), len(s.model.Groups())
	rows := func() {
		if len(s.batches.rows) != mb*d { // subspace setup may have made it
			s.batches.rows = make([]float32, mb*d)
		}
	}
	base := floatRelease{s}
	if lat, ok := s.noise.(*mechanism.LatticeNoise); ok {
		return s.newLatticeGradients(lat, rows)
	}
	if s.cfg.Augmult > 1 {
		a, err := newAugmenter(s.cfg.Augmult, s.data.train.Shape, s.cfg.Seed)
		if err != nil {
			return nil, err
		}
		rows()
		return augmultGradients{base, a}, nil
	}
	nc, ok := s.clipper.(clip.NormClipper)
	if ok && s.share.twice == nil && !s.cfg.usesLattice() {
		return &normOnlyGradients{floatRelease: base, norm: precisionMargin(nc, s.cfg.Precision), normsSq: make([]float64, mb*k), scales: make([]float32, mb*k)}, nil
	}
	// The factored and layered paths read no materialised rows: not with
	// adaptive clipping (it rescales them) or the private diagnostics
	// (they read their norms).
	if s.quant == nil && !s.cfg.PrivateDiagnostics && !materialiseAlways && !s.cfg.usesLattice() {
		fm, ok := s.model.(factoredModel)
		if fc, isFC := s.clipper.(clip.FactoredClipper); ok && isFC && fm.Factored() {
			return factoredGradients{base, fm, fc}, nil
		}
		lm, ok := s.model.(layeredModel)
		if lc, isLC := s.clipper.(clip.LayerClipper); ok && isLC {
			return layeredGradients{base, lm, lc}, nil
		}
	}
	rows()
	return materialisedGradients{base}, nil
}

// floatRelease is the release of the strategies that clip into the float
// sum: the mechanism's noise added to it.
type floatRelease struct{ s *state }

func (f floatRelease) start(int)          {}
func (f floatRelease) chunkLen() int      { return f.s.model.MaxBatch() }
func (floatRelease) reduce(Reducer) error { return nil }

func (f floatRelease) release(sum []float32) error {
	f.s.noise.Add(sum, f.s.noiseRNG)
	return nil
}

// gather loads the examples idx into the batch buffers.
func (s *state) gather(idx []int) models.Batch {
	return s.batches.gather(s.data.train, idx)
}

// addLosses records the chunk's b per-example losses.
func (s *state) addLosses(b int, st *stepStats) {
	for _, l := range s.batches.losses[:b] {
		st.lossSum += float64(l)
	}
	st.n += b
}

type normOnlyGradients struct {
	floatRelease
	norm    clip.NormClipper
	normsSq []float64 // the chunk's per-sample, per-group squared norms
	scales  []float32 // their clip scales
	kept    []int     // the chunk's examples that are not dropped
}

func (g *normOnlyGradients) chunk(idx []int, sum []float32, st *stepStats) error {
	s, b, k := g.s, len(idx), len(g.s.model.Groups())
	if err := s.model.PerSampleNormsSq(s.gather(idx), g.normsSq[:b*k], s.batches.losses[:b]); err != nil {
		return err
	}
	st.addClip(g.scale(b, k, true))
	for i := 0; i < b; i++ {
		var sq float64
		for _, v := range g.normsSq[i*k : (i+1)*k] {
			sq += v
		}
		st.addNorm(math.Sqrt(sq))
	}
	// A dropped example (a scale of 0: a non-finite or overflowing norm)
	// must add exactly nothing. Multiplying it by 0 does not do that
	// (0·NaN and 0·Inf are NaN), so the chunk's per-sample state is
	// recomputed without it and only the kept examples enter the products
	// (docs/architecture.md#dropped-examples). This costs a second pass
	// only in a chunk that drops an example.
	g.kept = g.kept[:0]
	for i, j := range idx {
		if !models.Dropped(g.scales[i*k : (i+1)*k]) {
			g.kept = append(g.kept, j)
		}
	}
	if len(g.kept) < b {
		b = len(g.kept)
		if b == 0 {
			return nil
		}
		if err := s.model.PerSampleNormsSq(s.gather(g.kept), g.normsSq[:b*k], s.batches.losses[:b]); err != nil {
			return err
		}
		g.scale(b, k, false)
		for i := 0; i < b; i++ {
			if models.Dropped(g.scales[i*k : (i+1)*k]) {
				// Finite in the first pass, not in the second: refuse
				// rather than add a non-finite product.
				return fmt.Errorf("per-sample norms differ between two passes over the same examples")
			}
		}
	}
	if err := s.model.AccumulateScaled(g.scales[:b*k], sum); err != nil {
		return err
	}
	s.addLosses(b, st)
	return nil
}

// scale sets the clip scales of the chunk's first b examples from their
// norms (the adaptive clip counting them when observe is set).
func (g *normOnlyGradients) scale(b, k int, observe bool) clip.Stats {
	if q := g.s.quant; q != nil {
		return q.scalesObserving(g.norm, g.normsSq[:b*k], b, k, g.scales[:b*k], observe)
	}
	return g.norm.Scales(g.normsSq[:b*k], b, g.scales[:b*k])
}

// factoredGradients is clipMaterialised for a factored model: the same
// masks, drawn in the same order, and the same clipping, with no gradient
// materialised.
type factoredGradients struct {
	floatRelease
	model   factoredModel
	clipper clip.FactoredClipper
}

func (g factoredGradients) chunk(idx []int, sum []float32, st *stepStats) error {
	s, b := g.s, len(idx)
	fs, _, err := g.model.Factors(s.gather(idx), s.batches.losses[:b])
	if err != nil {
		return err
	}
	st.addClip(g.clipper.ClipSumFactored(fs, b, s.drawMasks(b), sum))
	s.addLosses(b, st)
	return nil
}

// layeredGradients is clipMaterialised reading the per-sample gradients
// where the engine keeps them: the same masks, drawn in the same order, and
// the same clipped sum bit for bit, with no b×D copy.
type layeredGradients struct {
	floatRelease
	model   layeredModel
	clipper clip.LayerClipper
}

func (g layeredGradients) chunk(idx []int, sum []float32, st *stepStats) error {
	s, b := g.s, len(idx)
	ls, err := g.model.LayerGrads(s.gather(idx), s.batches.losses[:b])
	if err != nil {
		return err
	}
	st.addClip(g.clipper.ClipSumLayers(ls, b, s.drawMasks(b), sum))
	s.addLosses(b, st)
	return nil
}

type materialisedGradients struct{ floatRelease }

func (g materialisedGradients) chunk(idx []int, sum []float32, st *stepStats) error {
	s, b, d := g.s, len(idx), g.s.model.NumParams()
	grads := s.batches.rows[:b*d]
	if err := s.model.PerSampleGrads(s.gather(idx), grads, s.batches.losses[:b]); err != nil {
		return err
	}
	s.clipMaterialised(grads, b, d, sum, st)
	s.addLosses(b, st)
	return nil
}

type augmultGradients struct {
	floatRelease
	aug *augmenter
}

func (g augmultGradients) start(step int) { g.aug.startStep(step) }
func (g augmultGradients) chunkLen() int  { return max(1, g.s.model.MaxBatch()/g.aug.k) }

// clipMaterialised clips b materialised per-sample gradients g (b×d) into
// sum, with twice sampling's coordinate masks and adaptive clipping's scale
// when on, and records their norms and clip counts.
func (s *state) clipMaterialised(g []float32, b, d int, sum []float32, st *stepStats) {
	if s.cfg.PrivateDiagnostics {
		// The raw norms are a private diagnostic; without it, a pass over
		// every materialised gradient saved (about a tenth of a twice step).
		for i := 0; i < b; i++ {
			st.addNorm(math.Sqrt(clip.SumSquares(g[i*d : (i+1)*d])))
		}
	}
	if s.quant != nil {
		s.quant.scaleRows(g, b, d)
	}
	st.addClip(s.clipper.ClipSum(g, b, s.drawMasks(b), sum))
}

// drawMasks draws twice sampling's coordinate masks for the b examples of a
// chunk, in example order (nil without twice sampling).
func (s *state) drawMasks(b int) []*sampler.Mask {
	if s.share.twice == nil {
		return nil
	}
	masks := s.share.masks[:b]
	if s.dist.Size() > 1 {
		return s.drawOwnedMasks(masks)
	}
	for _, m := range masks {
		s.share.twice.FillMask(m)
	}
	return masks
}
