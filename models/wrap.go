package models

import (
	"fmt"

	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/rng"
)

// FromNetwork wraps a network built with nn.NewNetwork as a PerSampleModel
// (per-sample gradients, norms and evaluation come with it). arch names the
// architecture in saved files; classifier says whether Evaluate counts
// correct predictions (false for regression). The parameters are used as
// they are: initialise them first (net.Init) or use FromLayers.
func FromNetwork(arch string, net *nn.Network[float32], classifier bool) *Net {
	return newNet(arch, net, classifier)
}

// FromLayers builds a classifier from a layer stack: the network in →
// layers..., softmax cross-entropy over its outputs (at least two classes),
// parameters drawn from seed. maxBatch is the largest chunk computed at
// once (0: 256).
//
//	m, err := models.FromLayers("mlp", nn.Vec(20), 0, 1,
//		nn.NewLinear[float32](20, 32, true), nn.NewReLU[float32](),
//		nn.NewLinear[float32](32, 3, true))
func FromLayers(arch string, in nn.Shape, maxBatch int, seed uint64, layers ...nn.Layer[float32]) (*Net, error) {
	if maxBatch <= 0 {
		maxBatch = 256
	}
	net, err := nn.NewNetwork(in, maxBatch, &nn.SoftmaxCrossEntropy[float32]{}, layers...)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", arch, err)
	}
	net.Init(rng.New(seed))
	return newNet(arch, net, true), nil
}
