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

// useFactored sets s.factored when the materialised path can clip in
// factored form instead: a Linear-only model, a clipper that takes factors
// (flat or hybrid), and nothing that needs the materialised rows (adaptive
// clipping rescales them; the private diagnostics read their norms).
func (s *state) useFactored() {
	fm, ok := s.model.(factoredModel)
	_, fc := s.clipper.(clip.FactoredClipper)
	if ok && fc && fm.Factored() && s.norm == nil && s.quant == nil && s.aug == nil && !s.cfg.PrivateDiagnostics && !materialiseAlways && !s.cfg.Noise.Lattice() {
		s.factored = fm
	}
}

// materialiseAlways turns the factored path off (tests compare the two).
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
