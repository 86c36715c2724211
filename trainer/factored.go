package trainer

import (
	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/models"
	"github.com/dptrain/dptrain/models/nn"
)

// factoredModel is a model whose per-sample gradients are rank one per
// layer (models.Net with Linear layers only).
type factoredModel interface {
	Factored() bool
	Factors(b models.Batch, losses []float32) ([]nn.LinearFactors[float32], bool, error)
}

// layeredModel is a model that hands out its per-sample gradients layer by
// layer where the engine keeps them (models.Net: Conv2d's cache in place).
type layeredModel interface {
	LayerGrads(b models.Batch, losses []float32) ([]nn.LayerGrads[float32], error)
}

// useFactored sets s.factored when the materialised path can clip in
// factored form instead: a Linear-only model, a clipper that takes factors
// (flat or hybrid), and nothing that needs the materialised rows (adaptive
// clipping rescales them; the private diagnostics read their norms). For
// other models of the engine (conv nets) with a clipper that reads
// per-layer gradients (hybrid), it sets s.layered under the same
// conditions.
func (s *state) useFactored() {
	if s.norm != nil || s.quant != nil || s.aug != nil || s.cfg.PrivateDiagnostics || materialiseAlways || s.cfg.Noise.Lattice() {
		return
	}
	fm, ok := s.model.(factoredModel)
	if _, fc := s.clipper.(clip.FactoredClipper); ok && fc && fm.Factored() {
		s.factored = fm
		return
	}
	lm, ok := s.model.(layeredModel)
	if _, lc := s.clipper.(clip.LayerClipper); ok && lc {
		s.layered = lm
	}
}

// materialiseAlways turns the factored and layered paths off (tests
// compare them with the materialised one).
var materialiseAlways bool

// clipFactored is clipMaterialised for a factored model: the same masks,
// drawn in the same order, and the same clipping, with no gradient
// materialised.
func (s *state) clipFactored(batch models.Batch, b int, sum []float32, st *stepStats) error {
	fs, _, err := s.factored.Factors(batch, s.losses[:b])
	if err != nil {
		return err
	}
	st.addClip(s.clipper.(clip.FactoredClipper).ClipSumFactored(fs, b, s.drawMasks(b), sum))
	return nil
}

// clipLayered is clipMaterialised reading the per-sample gradients where
// the engine keeps them: the same masks, drawn in the same order, and the
// same clipped sum bit for bit, with no b×D copy.
func (s *state) clipLayered(batch models.Batch, b int, sum []float32, st *stepStats) error {
	ls, err := s.layered.LayerGrads(batch, s.losses[:b])
	if err != nil {
		return err
	}
	st.addClip(s.clipper.(clip.LayerClipper).ClipSumLayers(ls, b, s.drawMasks(b), sum))
	return nil
}
