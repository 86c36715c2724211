package trainer

import (
	"math"

	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/models"
)

// gradients is the run's gradient strategy, chosen once at setup
// (chooseGradients): it computes one chunk's per-sample gradients, clips
// them into the step's sum and records the chunk's losses, norms and clip
// counts. Every strategy adds the same clipped sum up to float rounding;
// they differ in what they materialise.
type gradients interface {
	// start prepares a step (augmentation draws its crops per step).
	start(step int)
	// chunk clips the examples idx into sum.
	chunk(idx []int, sum []float32, st *stepStats) error
}

// chooseGradients picks the strategy: augmentation multiplicity, the
// norm-only path (per-sample norms, then one scaled backward pass), the
// factored path (Linear-only models clipped from their factors), the
// layered path (conv nets clipped from the engine's per-layer per-sample
// gradients in place), or materialised per-sample gradients.
func (s *state) chooseGradients() gradients {
	switch {
	case s.lat != nil:
		return latticeGradients{s}
	case s.aug != nil:
		return augmultGradients{s}
	case s.norm != nil:
		return normOnlyGradients{s}
	case s.factored != nil:
		return factoredGradients{s}
	case s.layered != nil:
		return layeredGradients{s}
	}
	return materialisedGradients{s}
}

// gather loads the examples idx into the batch buffers.
func (s *state) gather(idx []int) models.Batch {
	b, in := len(idx), s.model.InputSize()
	s.data.train.Gather(idx, s.x[:b*in], s.y[:b])
	return s.batches.batch(s.x[:b*in], s.y[:b])
}

// addLosses records the chunk's b per-example losses.
func (s *state) addLosses(b int, st *stepStats) {
	for _, l := range s.losses[:b] {
		st.lossSum += float64(l)
	}
	st.n += b
}

type normOnlyGradients struct{ s *state }

func (normOnlyGradients) start(int) {}

func (g normOnlyGradients) chunk(idx []int, sum []float32, st *stepStats) error {
	s, b, k := g.s, len(idx), len(g.s.model.Groups())
	if err := s.model.PerSampleNormsSq(s.gather(idx), s.normsSq[:b*k], s.losses[:b]); err != nil {
		return err
	}
	var cs clip.Stats
	if s.quant != nil {
		cs = s.quant.scales(s.norm, s.normsSq[:b*k], b, k, s.scales[:b*k])
	} else {
		cs = s.norm.Scales(s.normsSq[:b*k], b, s.scales[:b*k])
	}
	st.addClip(cs)
	for i := 0; i < b; i++ {
		var sq float64
		for _, v := range s.normsSq[i*k : (i+1)*k] {
			sq += v
		}
		st.addNorm(math.Sqrt(sq))
	}
	if err := s.model.AccumulateScaled(s.scales[:b*k], sum); err != nil {
		return err
	}
	s.addLosses(b, st)
	return nil
}

type factoredGradients struct{ s *state }

func (factoredGradients) start(int) {}

func (g factoredGradients) chunk(idx []int, sum []float32, st *stepStats) error {
	if err := g.s.clipFactored(g.s.gather(idx), len(idx), sum, st); err != nil {
		return err
	}
	g.s.addLosses(len(idx), st)
	return nil
}

type layeredGradients struct{ s *state }

func (layeredGradients) start(int) {}

func (g layeredGradients) chunk(idx []int, sum []float32, st *stepStats) error {
	if err := g.s.clipLayered(g.s.gather(idx), len(idx), sum, st); err != nil {
		return err
	}
	g.s.addLosses(len(idx), st)
	return nil
}

type materialisedGradients struct{ s *state }

func (materialisedGradients) start(int) {}

func (g materialisedGradients) chunk(idx []int, sum []float32, st *stepStats) error {
	s, b, d := g.s, len(idx), g.s.model.NumParams()
	grads := s.grads[:b*d]
	if err := s.model.PerSampleGrads(s.gather(idx), grads, s.losses[:b]); err != nil {
		return err
	}
	s.clipMaterialised(grads, b, d, sum, st)
	s.addLosses(b, st)
	return nil
}

type augmultGradients struct{ s *state }

func (g augmultGradients) start(step int) { g.s.aug.startStep(step) }

func (g augmultGradients) chunk(idx []int, sum []float32, st *stepStats) error {
	return g.s.augChunk(idx, st, sum)
}

// latticeGradients materialises each example's gradient and quantises it
// onto the lattice (clipped to C(1−η) in L2, truncated toward zero) into
// the step's exact int64 sum s.acc; the step releases γ·(S + round(Z))
// from it (docs/secure-noise.md). The float sum stays zero.
type latticeGradients struct{ s *state }

func (g latticeGradients) start(int) { clear(g.s.acc) }

func (g latticeGradients) chunk(idx []int, _ []float32, st *stepStats) error {
	s, b, d := g.s, len(idx), g.s.model.NumParams()
	grads := s.grads[:b*d]
	if err := s.model.PerSampleGrads(s.gather(idx), grads, s.losses[:b]); err != nil {
		return err
	}
	for i := 0; i < b; i++ {
		row := grads[i*d : (i+1)*d]
		if s.cfg.PrivateDiagnostics {
			st.addNorm(math.Sqrt(clip.SumSquares(row)))
		}
		switch s.lat.Quantize(row, s.acc) {
		case lattice.Clipped:
			st.clipped++
		case lattice.NonFinite:
			st.nonFinite++
		}
	}
	s.addLosses(b, st)
	return nil
}
