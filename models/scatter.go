package models

import (
	"fmt"

	"github.com/dptrain/dptrain/models/nn"
)

// ScatterCNNNet is Tramèr & Boneh's small CNN on ScatterNet features
// (their CIFAR-10 configuration [64, M, 64]): conv 3×3 in→64 (padding 1),
// tanh, max-pool 2/2, conv 3×3 64→64 (padding 1), tanh, then a linear layer
// to the classes. For 243×8×8 CIFAR-10 scattering features and 10 classes
// it has 187,210 parameters. The features should be normalised first
// (trainer: feature_norm group or private).
func ScatterCNNNet[T nn.Float](in nn.Shape, classes, maxBatch int) (*nn.Network[T], error) {
	if in.C < 1 || in.H < 2 || in.W < 2 {
		return nil, fmt.Errorf("scatcnn: input shape %v too small (need C ≥ 1, H, W ≥ 2)", in)
	}
	if classes < 2 {
		return nil, fmt.Errorf("scatcnn: need at least 2 classes, got %d", classes)
	}
	h, w := in.H/2, in.W/2
	return nn.NewNetwork(in, maxBatch, &nn.SoftmaxCrossEntropy[T]{},
		nn.NewConv2d[T](in.C, 64, 3, 1, 1, true), nn.NewTanh[T](), nn.NewMaxPool2d[T](2, 2),
		nn.NewConv2d[T](64, 64, 3, 1, 1, true), nn.NewTanh[T](),
		nn.NewFlatten[T](), nn.NewLinear[T](64*h*w, classes, true))
}

// NewScatterCNN returns ScatterCNNNet in float32 for features of shape in.
func NewScatterCNN(in nn.Shape, classes int, o Options) (*Net, error) {
	net, err := ScatterCNNNet[float32](in, classes, o.maxBatch(64))
	if err != nil {
		return nil, err
	}
	initNet(net, o.Seed)
	return newNet(fmt.Sprintf("scatcnn(%d,%d,%d,%d)", in.C, in.H, in.W, classes), net, true), nil
}
