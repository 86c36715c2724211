package trainer

import (
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

// materialiseAlways turns the factored and layered paths off (tests
// compare them with the materialised one).
var materialiseAlways bool
