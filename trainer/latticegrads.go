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

// latticeGradients quantises each example's clipped gradient onto the
// lattice into the step's exact int64 sum; its release is γ·(S + round(Z))
// from that sum (docs/secure-noise.md), overwriting the float sum, which
// stays zero. The clip is the mechanism's, done on the lattice: flat L2
// (C(1−η)), per layer (each layer to its C_l), L∞ (each coordinate to the
// lattice steps below c∞) or hybrid (L2, then L∞), with twice sampling's
// coordinate masks applied to the lattice point. A model that hands out
// its per-sample gradients per layer (models.Net) is read where the engine
// keeps them, with no b×D copy; others, and augmentation means, are
// materialised.
type latticeGradients struct {
	s       *state
	lat     *mechanism.LatticeNoise // the run's noise (rebuilt on resume), fixed at start
	acc     []int64                 // the step's exact lattice sum
	layered layeredModel            // nil: materialise
	aug     *augmenter              // augmentation multiplicity: quantise the means
	bounds  mechanism.LatticeBounds // the clip
	groups  []nn.Group              // per-layer clipping's layers (nil otherwise)
	qinf    int64                   // the L∞ bound in lattice steps (0: none)
	sq, t   []float64               // the chunk's squared norms and clip factors (per example, or per example and layer)
	tops    []float32               // the chunk's largest magnitudes (L∞ clipping's count)
	tl      []float64               // one example's per-layer factors
	pieces  []latticePiece
	// factors is the model's LayerGradsAsKept where Linear layers can be
	// truncated from their factors and conv layers summed in their flip
	// layout (flat L2 clip, no coordinate masks): nil otherwise.
	factors func(models.Batch, []float32) ([]nn.LayerGrads[float32], error)
	dataLs  []nn.LayerGrads[float32] // the chunk's layers held as gradients
	flipAcc [][]int64                // per layer: its sum in the flip layout (nil: unused)
}

// latticePiece is a range of one layer's coordinates, or of a factored
// Linear layer's rows (row Out is the bias): the unit of the parallel
// quantisation, whose slice of the sum only one worker writes.
type latticePiece struct{ layer, lo, hi int }

// factoredLayersModel hands out Linear layers as factors (models.Net).
type factoredLayersModel interface {
	LayerGradsAsKept(b models.Batch, losses []float32) ([]nn.LayerGrads[float32], error)
}

// factoredLinearOff turns the factored Linear truncation off (tests
// compare it with the computed gradients).
var factoredLinearOff bool

const latticePieceLen = 2048

// newLatticeGradients is newGradients' choice for lattice noise; rows
// allocates the materialised rows buffer.
func (s *state) newLatticeGradients(lat *mechanism.LatticeNoise, rows func()) (gradients, error) {
	mb := s.model.MaxBatch()
	g := &latticeGradients{s: s, acc: make([]int64, lat.Len()), bounds: lat.Bounds()}
	if cs := g.bounds.Layers; cs != nil {
		gs := s.model.Groups()
		if len(gs) != len(cs) {
			return nil, fmt.Errorf("noise lattice: %d per-layer clip norms for %d parameter groups", len(cs), len(gs))
		}
		g.groups, g.tl = gs, make([]float64, len(cs))
	}
	if !math.IsInf(g.bounds.CInf, 1) {
		g.qinf = lat.FloorSteps(g.bounds.CInf)
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
	// The adaptive clip rescales rows, which the layered views cannot.
	if lm, ok := s.model.(layeredModel); ok && !materialiseAlways && s.quant == nil {
		g.layered, g.sq, g.tops = lm, make([]float64, mb), make([]float32, mb)
		g.t = make([]float64, mb*max(1, len(g.tl)))
		if fm, ok := s.model.(factoredLayersModel); ok && g.groups == nil && g.qinf == 0 && !factoredLinearOff {
			g.factors = fm.LayerGradsAsKept
		}
		return g, nil
	}
	rows()
	return g, nil
}

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

// factor returns one example's clip factor from its squared norm and
// largest magnitude (flat, L∞ or hybrid), counting it as clipped when the
// L2 clip acts or a coordinate reaches the L∞ bound, and 0 for an example
// that is dropped.
func (g *latticeGradients) factor(sumSq float64, top float32, d int, st *stepStats) float64 {
	t, out := g.lat.ClipFactorTo(sumSq, d, g.bounds.C2)
	if out == lattice.Kept && g.qinf > 0 && float64(top)*t >= float64(g.qinf) {
		out = lattice.Clipped
	}
	st.addOutcome(out)
	return t
}

// layerFactors writes per-layer clipping's factors for one example whose
// layer k is layer(k) to g.tl: each layer clipped to its C_l onto the
// lattice (lattice.Noise.ClipFactorTo), counting clipped layers as
// clip.PerLayer does; all zero (the example adds nothing) if any layer is
// not finite.
func (g *latticeGradients) layerFactors(layer func(k int) []float32, st *stepStats) []float64 {
	clipped := 0
	for k, c := range g.bounds.Layers {
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

// add adds the lattice point of v (coordinates off… of the example) with
// factor t to acc: truncated, clamped to the L∞ bound and masked when
// those apply.
func (g *latticeGradients) add(v []float32, off int, t float64, m *sampler.Mask, acc []int64) {
	if g.qinf == 0 && m == nil {
		lattice.AddScaled(v, t, acc)
		return
	}
	q := g.qinf
	if q == 0 {
		q = g.lat.ClipSteps() // no L∞ bound: the L2 clip already keeps |q_j| ≤ 2ᵏ
	}
	var words []uint64
	if m != nil {
		words = m.Words()
	}
	lattice.AddScaledClamped(v, t, q, words, off, acc)
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
	if s.cfg.PrivateDiagnostics {
		for i := 0; i < b; i++ {
			st.addNorm(math.Sqrt(clip.SumSquares(grads[i*d : (i+1)*d])))
		}
	}
	if s.quant != nil {
		// The adaptive clip: rows times C/C_t (counted into its
		// quantile), clipped at C; its afterNoise hook maps the release
		// back to C_t's scale, a post-processing.
		s.quant.scaleRows(grads, b, d)
	}
	masks := s.drawMasks(b)
	for i := 0; i < b; i++ {
		row, m := grads[i*d:(i+1)*d], maskOf(masks, i)
		sq := clip.SumSquares(row)
		if g.groups != nil {
			t := g.layerFactors(func(k int) []float32 { return row[g.groups[k].Offset : g.groups[k].Offset+g.groups[k].Len] }, st)
			for k, gr := range g.groups {
				if t[k] != 0 {
					g.add(row[gr.Offset:gr.Offset+gr.Len], gr.Offset, t[k], m, g.acc[gr.Offset:gr.Offset+gr.Len])
				}
			}
			continue
		}
		if t := g.factor(sq, maxAbs32(row), d, st); t != 0 {
			g.add(row, 0, t, m, g.acc)
		}
	}
	return nil
}

// chunkLayers is chunk on the engine's per-layer per-sample gradients:
// each example's squared norm in SumSquares' order over its layers (so the
// lattice sum equals the materialised path's bit for bit) and its clip
// factors, then every example's truncated terms added piece by piece,
// pieces in parallel. Integer addition is exact, so the split changes
// nothing.
func (g *latticeGradients) chunkLayers(idx []int, st *stepStats) error {
	s, b, d := g.s, len(idx), g.s.model.NumParams()
	grads := g.layered.LayerGrads
	if g.factors != nil && s.share.twice == nil {
		grads = g.factors
	}
	ls, err := grads(s.gather(idx), s.batches.losses[:b])
	if err != nil {
		return err
	}
	if g.pieces == nil {
		for k, l := range ls {
			n, step := l.Len, latticePieceLen
			if f := l.Linear; f != nil { // rows of In weights, then the bias
				n, step = f.Out+1, max(1, latticePieceLen/f.In)
			}
			for lo := 0; lo < n; lo += step {
				g.pieces = append(g.pieces, latticePiece{k, lo, min(n, lo+step)})
			}
		}
	}
	masks := s.drawMasks(b)
	g.dataLs = g.dataLs[:0]
	for k, l := range ls {
		if l.Linear == nil {
			g.dataLs = append(g.dataLs, l)
		}
		if l.Flipped() {
			if g.flipAcc == nil {
				g.flipAcc = make([][]int64, len(ls))
			}
			if g.flipAcc[k] == nil {
				g.flipAcc[k] = make([]int64, l.Len)
			}
		}
	}
	if len(g.dataLs) == len(ls) {
		clip.LayerSumSquares(g.dataLs, b, g.sq, g.tops)
	} else { // as kept (flat clip, no L∞): each layer's own sum, any order will do
		clear(g.sq[:b])
		nn.Parallel(b, b*d, func(_, lo, hi int) {
			for _, l := range g.dataLs {
				l.AddSumSquares(lo, hi, g.sq)
			}
		})
		g.addFactoredSumSquares(ls, b)
	}
	L := 1 // factors per example
	if g.groups != nil {
		L = len(g.groups)
		if len(ls) != L {
			return fmt.Errorf("noise lattice: the model hands out %d layers for %d per-layer clip norms", len(ls), L)
		}
		for k, l := range ls {
			if l.Offset != g.groups[k].Offset || l.Len != g.groups[k].Len {
				return fmt.Errorf("noise lattice: layer %d at offset %d len %d is not parameter group %q", k, l.Offset, l.Len, g.groups[k].Name)
			}
		}
	}
	for i := range b {
		if s.cfg.PrivateDiagnostics {
			st.addNorm(math.Sqrt(g.sq[i]))
		}
		if g.groups != nil {
			copy(g.t[i*L:(i+1)*L], g.layerFactors(func(k int) []float32 { return ls[k].Sample(i) }, st))
			continue
		}
		g.t[i] = g.factor(g.sq[i], g.tops[i], d, st)
	}
	nn.Parallel(len(g.pieces), b*d, func(_, lo, hi int) {
		for _, p := range g.pieces[lo:hi] {
			l := ls[p.layer]
			if l.Linear != nil {
				g.addFactoredRows(l.Linear, p, b)
				continue
			}
			off := l.Offset + p.lo
			acc := g.acc[off : l.Offset+p.hi]
			if l.Flipped() { // summed in the flip layout, mapped back below
				acc = g.flipAcc[p.layer][p.lo:p.hi]
			}
			for i := range b {
				f := g.t[i*L+min(p.layer, L-1)] // flat: one factor per example
				if f != 0 {                     // 0: the example is dropped and adds nothing
					g.add(l.Sample(i)[p.lo:p.hi], off, f, maskOf(masks, i), acc)
				}
			}
		}
	})
	for k, l := range ls {
		if l.Flipped() {
			l.UnflipAdd(g.flipAcc[k], g.acc[l.Offset:l.Offset+l.Len])
			clear(g.flipAcc[k])
		}
	}
	s.addLosses(b, st)
	return nil
}

// addFactoredSumSquares adds each factored Linear layer's squared norm to
// g.sq: ‖DZ_i ⊗ A_i‖² + ‖DZ_i‖² = (‖A_i‖² + 1)·‖DZ_i‖² (without the 1 when
// the layer has no bias), from float64 sums of exact squares. Every term
// of the example's sum still passes through at most d − 1 roundings, so
// the margin η(d) covers it (docs/secure-noise.md, "Factored Linear
// layers").
func (g *latticeGradients) addFactoredSumSquares(ls []nn.LayerGrads[float32], b int) {
	for _, l := range ls {
		f := l.Linear
		if f == nil {
			continue
		}
		for i := range b {
			a2 := clip.SumSquares(f.A[i*f.In : (i+1)*f.In])
			if f.Bias {
				a2++
			}
			g.sq[i] += a2 * clip.SumSquares(f.DZ[i*f.Out:(i+1)*f.Out])
		}
	}
}

// addFactoredRows truncates rows [p.lo, p.hi) of a factored Linear layer's
// gradient for every kept example into the sum: weight row r of example i
// is DZ_ir·A_i, truncated as trunc(fl(fl(t_i·DZ_ir)·A_ij)) — one rounding
// more than AddScaled on the computed row, which η(d) covers — and row Out
// is the bias DZ_i, truncated with t_i. The flat clip only: one factor per
// example.
func (g *latticeGradients) addFactoredRows(f *nn.LinearFactors[float32], p latticePiece, b int) {
	for i := range b {
		t := g.t[i]
		if t == 0 { // dropped: adds nothing
			continue
		}
		a, dz := f.A[i*f.In:(i+1)*f.In], f.DZ[i*f.Out:(i+1)*f.Out]
		for r := p.lo; r < p.hi; r++ {
			if r == f.Out {
				if f.Bias {
					lattice.AddScaled(dz, t, g.acc[f.Offset+f.Out*f.In:f.Offset+f.Out*f.In+f.Out])
				}
				continue
			}
			if c := t * float64(dz[r]); c != 0 {
				lattice.AddScaled(a, c, g.acc[f.Offset+r*f.In:f.Offset+(r+1)*f.In])
			}
		}
	}
}

// maskOf is example i's coordinate mask (nil without twice sampling).
func maskOf(masks []*sampler.Mask, i int) *sampler.Mask {
	if masks == nil {
		return nil
	}
	return masks[i]
}

// maxAbs32 is max |v_j| (NaN when some v_j is NaN does not matter: the
// example's norm is then non-finite and it is dropped).
func maxAbs32(v []float32) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	return m
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
