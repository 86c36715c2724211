package trainer

import (
	"fmt"
	"math"

	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/models/nn"
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
		g := &latticeGradients{s: s, acc: make([]int64, lat.Len())}
		if cs := lat.LayerNorms(); cs != nil {
			gs := s.model.Groups()
			if len(gs) != len(cs) {
				return nil, fmt.Errorf("noise lattice: %d per-layer clip norms for %d parameter groups", len(cs), len(gs))
			}
			g.groups, g.layerC, g.tl = gs, cs, make([]float64, len(cs))
		}
		if s.cfg.Augmult > 1 { // the means are materialised
			a, err := newAugmenter(s.cfg.Augmult, s.data.train.Shape, s.cfg.Seed)
			if err != nil {
				return nil, err
			}
			g.aug = a
			rows()
			return g, nil
		}
		if lm, ok := s.model.(layeredModel); ok && !materialiseAlways {
			g.layered, g.sq, g.t = lm, make([]float64, mb), make([]float64, mb*max(1, len(g.layerC)))
			return g, nil
		}
		rows()
		return g, nil
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
	if ok && s.share.twice == nil && !s.cfg.Noise.Lattice() {
		return &normOnlyGradients{floatRelease: base, norm: precisionMargin(nc, s.cfg.Precision), normsSq: make([]float64, mb*k), scales: make([]float32, mb*k)}, nil
	}
	// The factored and layered paths read no materialised rows: not with
	// adaptive clipping (it rescales them) or the private diagnostics
	// (they read their norms).
	if s.quant == nil && !s.cfg.PrivateDiagnostics && !materialiseAlways && !s.cfg.Noise.Lattice() {
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
		if !dropped(g.scales[i*k : (i+1)*k]) {
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
			if dropped(g.scales[i*k : (i+1)*k]) {
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

// dropped reports whether an example with these per-group clip scales is
// dropped: any scale of 0 (a non-finite norm) drops the whole example.
func dropped(scales []float32) bool {
	for _, v := range scales {
		if v == 0 || v != v {
			return true
		}
	}
	return false
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

// latticeGradients quantises each example's clipped gradient onto the
// lattice (clipped to C(1−η) in L2, truncated toward zero) into the step's
// exact int64 sum; its release is γ·(S + round(Z)) from that sum
// (docs/secure-noise.md), overwriting the float sum, which stays zero. A
// model that hands out its per-sample gradients per layer (models.Net) is
// read where the engine keeps them, with no b×D copy; others are
// materialised.
type latticeGradients struct {
	s       *state
	lat     *mechanism.LatticeNoise // the run's noise (rebuilt on resume), fixed at start
	acc     []int64                 // the step's exact lattice sum
	layered layeredModel            // nil: materialise
	aug     *augmenter              // augmentation multiplicity: quantise the means
	groups  []nn.Group              // per-layer clipping's layers (nil: flat)
	layerC  []float64               // and their clip norms
	sq, t   []float64               // the chunk's squared norms and clip factors (per example, or per example and layer)
	tl      []float64               // one example's per-layer factors
	pieces  []latticePiece
}

// latticePiece is a range of one layer's coordinates: the unit of the
// parallel quantisation, whose slice of the sum only one worker writes.
type latticePiece struct{ layer, lo, hi int }

const latticePieceLen = 2048

func (g *latticeGradients) start(step int) {
	g.lat = g.s.noise.(*mechanism.LatticeNoise)
	clear(g.acc)
	if g.aug != nil {
		g.aug.startStep(step)
	}
}

func (g *latticeGradients) chunkLen() int {
	if g.aug != nil {
		return max(1, g.s.model.MaxBatch()/g.aug.k)
	}
	return g.s.model.MaxBatch()
}

func (g *latticeGradients) chunk(idx []int, _ []float32, st *stepStats) error {
	if g.layered != nil {
		return g.chunkLayers(idx, st)
	}
	s, b, d := g.s, len(idx), g.s.model.NumParams()
	var grads []float32
	if g.aug != nil {
		var err error
		if grads, err = g.aug.meanRows(s, idx, st); err != nil {
			return err
		}
	} else {
		grads = s.batches.rows[:b*d]
		if err := s.model.PerSampleGrads(s.gather(idx), grads, s.batches.losses[:b]); err != nil {
			return err
		}
		s.addLosses(b, st)
	}
	for i := 0; i < b; i++ {
		row := grads[i*d : (i+1)*d]
		if s.cfg.PrivateDiagnostics {
			st.addNorm(math.Sqrt(clip.SumSquares(row)))
		}
		if g.layerC == nil {
			st.addOutcome(g.lat.Quantize(row, g.acc))
			continue
		}
		t := g.layerFactors(func(k int) []float32 { return row[g.groups[k].Offset : g.groups[k].Offset+g.groups[k].Len] }, st)
		for k, gr := range g.groups {
			if t[k] != 0 {
				lattice.AddScaled(row[gr.Offset:gr.Offset+gr.Len], t[k], g.acc[gr.Offset:gr.Offset+gr.Len])
			}
		}
	}
	return nil
}

// layerFactors returns per-layer clipping's factors for one example whose
// layer k is layer(k): each layer clipped to its C_l onto the lattice
// (lattice.Noise.ClipFactorTo), counting clipped layers as PerLayer does;
// all zero (the example adds nothing) if any layer is not finite.
func (g *latticeGradients) layerFactors(layer func(k int) []float32, st *stepStats) []float64 {
	clipped := 0
	for k, c := range g.layerC {
		v := layer(k)
		f, out := g.lat.ClipFactorTo(clip.SumSquares(v), len(v), c)
		if out == lattice.NonFinite {
			clear(g.tl)
			st.addOutcome(lattice.NonFinite)
			return g.tl
		}
		if out == lattice.Clipped {
			clipped++
		}
		g.tl[k] = f
	}
	st.clipped += clipped
	return g.tl
}

// chunkLayers is chunk on the engine's per-layer per-sample gradients:
// each example's squared norm in SumSquares' order over its layers (so the
// lattice sum equals the materialised path's bit for bit), its clip factor,
// then every example's truncated terms added piece by piece, pieces in
// parallel. Integer addition is exact, so the split changes nothing.
func (g *latticeGradients) chunkLayers(idx []int, st *stepStats) error {
	s, b, d := g.s, len(idx), g.s.model.NumParams()
	ls, err := g.layered.LayerGrads(s.gather(idx), s.batches.losses[:b])
	if err != nil {
		return err
	}
	if g.pieces == nil {
		for k, l := range ls {
			for lo := 0; lo < l.Len; lo += latticePieceLen {
				g.pieces = append(g.pieces, latticePiece{k, lo, min(l.Len, lo+latticePieceLen)})
			}
		}
	}
	L := 1 // factors per example
	if g.layerC != nil {
		L = len(g.layerC)
		if len(ls) != L {
			return fmt.Errorf("noise lattice: the model hands out %d layers for %d per-layer clip norms", len(ls), L)
		}
		for k, l := range ls {
			if l.Offset != g.groups[k].Offset || l.Len != g.groups[k].Len {
				return fmt.Errorf("noise lattice: layer %d at offset %d len %d is not parameter group %q", k, l.Offset, l.Len, g.groups[k].Name)
			}
		}
		for i := range b {
			if s.cfg.PrivateDiagnostics {
				var sq float64
				for _, l := range ls {
					sq += clip.SumSquares(l.Sample(i))
				}
				st.addNorm(math.Sqrt(sq))
			}
			copy(g.t[i*L:(i+1)*L], g.layerFactors(func(k int) []float32 { return ls[k].Sample(i) }, st))
		}
	} else {
		clip.LayerSumSquares(ls, b, g.sq)
		for i := range b {
			if s.cfg.PrivateDiagnostics {
				st.addNorm(math.Sqrt(g.sq[i]))
			}
			var out lattice.Outcome
			g.t[i], out = g.lat.ClipFactor(g.sq[i], d)
			st.addOutcome(out)
		}
	}
	nn.Parallel(len(g.pieces), b*d, func(_, lo, hi int) {
		for _, p := range g.pieces[lo:hi] {
			l := ls[p.layer]
			acc := g.acc[l.Offset+p.lo : l.Offset+p.hi]
			for i := range b {
				f := g.t[i] // flat: one factor per example
				if g.layerC != nil {
					f = g.t[i*L+p.layer]
				}
				if f != 0 { // 0: NonFinite, the example adds nothing
					lattice.AddScaled(l.Sample(i)[p.lo:p.hi], f, acc)
				}
			}
		}
	})
	s.addLosses(b, st)
	return nil
}

// addOutcome counts a quantised example as clipped or dropped.
func (st *stepStats) addOutcome(o lattice.Outcome) {
	switch o {
	case lattice.Clipped:
		st.clipped++
	case lattice.NonFinite:
		st.nonFinite++
	}
}

// reduce sums the exact int64 lattice sums, which add exactly and in any
// order, so every rank then releases one process's lattice point, with the
// same noise from the shared stream.
func (g *latticeGradients) reduce(r Reducer) error {
	if err := r.SumInt64(g.acc); err != nil {
		return fmt.Errorf("all-reduce of the lattice sum: %w", err)
	}
	return nil
}

// latticeExtra is a feature whose extra coordinates (addExtra) the
// lattice release must add to its exact sum: the release overwrites the
// float sum, extra block included.
type latticeExtra interface {
	addLatticeExtra(acc []int64, clipSteps int64)
}

func (g *latticeGradients) release(sum []float32) error {
	for _, f := range g.s.features {
		if le, ok := f.(latticeExtra); ok {
			le.addLatticeExtra(g.acc, g.lat.ClipSteps())
		}
	}
	if err := g.lat.Release(g.acc, sum, g.s.noiseRNG); err != nil {
		return fmt.Errorf("lattice noise: %w", err)
	}
	return nil
}

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
