package models

import (
	"fmt"
	"strings"

	"github.com/dptrain/dptrain/models/nn"
	"github.com/dptrain/dptrain/rng"
)

// LogisticRegressionNet is multinomial logistic regression, Linear(d,
// classes) with softmax cross-entropy; for classes = 2 it is binary logistic
// regression, one logit Linear(d, 1) with the logistic loss and labels 0/1
// (d+1 parameters instead of 2d+2, and the usual GLM for per-instance
// reports). Parameters start at zero.
func LogisticRegressionNet[T nn.Float](d, classes, maxBatch int) (*nn.Network[T], error) {
	switch {
	case d <= 0:
		return nil, fmt.Errorf("logistic regression: %d features", d)
	case classes < 2:
		return nil, fmt.Errorf("logistic regression: %d classes, need at least 2", classes)
	case classes == 2:
		return nn.NewNetwork(nn.Vec(d), maxBatch, nn.LogisticLoss[T]{}, nn.NewLinear[T](d, 1, true))
	}
	return nn.NewNetwork(nn.Vec(d), maxBatch, &nn.SoftmaxCrossEntropy[T]{}, nn.NewLinear[T](d, classes, true))
}

// LinearRegressionNet is Linear(d, 1) with the squared loss ½(z − t)².
// Parameters start at zero.
func LinearRegressionNet[T nn.Float](d, maxBatch int) (*nn.Network[T], error) {
	if d <= 0 {
		return nil, fmt.Errorf("linear regression: %d features", d)
	}
	return nn.NewNetwork(nn.Vec(d), maxBatch, nn.SquaredLoss[T]{}, nn.NewLinear[T](d, 1, true))
}

// MLPNet is a multilayer perceptron in → widths... → out with activation
// "relu" (He initialisation) or "tanh" (Glorot) after every hidden layer,
// and softmax cross-entropy over out ≥ 2 classes.
func MLPNet[T nn.Float](in int, widths []int, out int, activation string, maxBatch int) (*nn.Network[T], error) {
	if in <= 0 || out < 2 {
		return nil, fmt.Errorf("mlp: %d inputs, %d classes", in, out)
	}
	scheme := nn.InitHe
	switch activation {
	case "relu":
	case "tanh":
		scheme = nn.InitGlorot
	default:
		return nil, fmt.Errorf("mlp: unknown activation %q (want relu or tanh)", activation)
	}
	var layers []nn.Layer[T]
	prev := in
	for _, w := range widths {
		if w <= 0 {
			return nil, fmt.Errorf("mlp: hidden width %d", w)
		}
		l := nn.NewLinear[T](prev, w, true)
		l.Scheme = scheme
		layers = append(layers, l)
		if activation == "relu" {
			layers = append(layers, nn.NewReLU[T]())
		} else {
			layers = append(layers, nn.NewTanh[T]())
		}
		prev = w
	}
	last := nn.NewLinear[T](prev, out, true)
	last.Scheme = nn.InitGlorot
	layers = append(layers, last)
	return nn.NewNetwork(nn.Vec(in), maxBatch, &nn.SoftmaxCrossEntropy[T]{}, layers...)
}

// MNISTCNNNet is the MNIST CNN of Opacus' example and Tramèr & Boneh (2021)
// for 1×28×28 inputs: conv 16 8×8 stride 2 pad 3, tanh, maxpool 2 stride 1,
// conv 32 4×4 stride 2, tanh, maxpool 2 stride 1, fc 512→32, tanh, fc 32→10;
// 26,010 parameters, PyTorch's default initialisation.
func MNISTCNNNet[T nn.Float](maxBatch int) (*nn.Network[T], error) {
	return MNISTCNNNetClasses[T](10, maxBatch)
}

// MNISTCNNNetClasses is MNISTCNNNet with its last layer 32→classes: the
// same network for any public class set (10: MNISTCNNNet itself).
func MNISTCNNNetClasses[T nn.Float](classes, maxBatch int) (*nn.Network[T], error) {
	if classes < 2 {
		return nil, fmt.Errorf("mnistcnn: need at least 2 classes, got %d", classes)
	}
	return nn.NewNetwork(nn.Shape{C: 1, H: 28, W: 28}, maxBatch, &nn.SoftmaxCrossEntropy[T]{},
		nn.NewConv2d[T](1, 16, 8, 2, 3, true), nn.NewTanh[T](), nn.NewMaxPool2d[T](2, 1),
		nn.NewConv2d[T](16, 32, 4, 2, 0, true), nn.NewTanh[T](), nn.NewMaxPool2d[T](2, 1),
		nn.NewFlatten[T](), nn.NewLinear[T](32*4*4, 32, true), nn.NewTanh[T](), nn.NewLinear[T](32, classes, true))
}

// resnetGroups is the GroupNorm group count of the ResNets (GEP's GN(4)).
const resnetGroups = 4

func conv3x3[T nn.Float](cin, cout, stride int, ws bool) nn.Layer[T] {
	return resnetConv[T](cin, cout, 3, stride, 1, ws)
}

// resnetConv is a bias-free He-initialised convolution, weight-standardised
// when ws (nn.WSConv2d).
func resnetConv[T nn.Float](cin, cout, k, stride, pad int, ws bool) nn.Layer[T] {
	if ws {
		c := nn.NewWSConv2d[T](cin, cout, k, stride, pad)
		c.Scheme = nn.InitHe
		return c
	}
	c := nn.NewConv2d[T](cin, cout, k, stride, pad, false)
	c.Scheme = nn.InitHe
	return c
}

// basicBlock is conv3×3–GN–ReLU–conv3×3–GN plus the shortcut: the identity,
// or a 1×1 convolution and GN when the shape changes. The ReLU after the sum
// is added by the caller.
func basicBlock[T nn.Float](cin, cout, stride int, ws bool) nn.Layer[T] {
	body := nn.NewSequential[T](
		conv3x3[T](cin, cout, stride, ws), nn.NewGroupNorm[T](resnetGroups, cout, true), nn.NewReLU[T](),
		conv3x3[T](cout, cout, 1, ws), nn.NewGroupNorm[T](resnetGroups, cout, true))
	if cin == cout && stride == 1 {
		return nn.NewResidual[T](body, nil)
	}
	proj := resnetConv[T](cin, cout, 1, stride, 0, ws)
	return nn.NewResidual[T](body, nn.NewSequential[T](proj, nn.NewGroupNorm[T](resnetGroups, cout, true)))
}

// ResNetGNNet is a CIFAR-style ResNet with BasicBlocks and GroupNorm(4,
// affine): a 3×3 stem conv to 16 channels, GN, ReLU; three stages of
// blocks[s] blocks with widths 16, 32, 64 (stride 2 entering stages 2 and
// 3, 1×1-conv+GN projection shortcuts there); global average pooling and
// Linear(64, classes). Convolutions have no bias and He initialisation.
// blocks {3,3,3} is ResNet-20; {3,4,3} is the ResNet22 reconstruction.
func ResNetGNNet[T nn.Float](in nn.Shape, blocks [3]int, classes, maxBatch int) (*nn.Network[T], error) {
	return ResNetGNNetWith[T](in, blocks, classes, maxBatch, ResNetOptions{})
}

// ResNetOptions are the ResNet builders' options.
type ResNetOptions struct {
	// WeightStd makes every convolution weight-standardised (nn.WSConv2d;
	// with GroupNorm, De et al. 2022's DP recipe).
	WeightStd bool
}

// ResNetGNNetWith is ResNetGNNet with options.
func ResNetGNNetWith[T nn.Float](in nn.Shape, blocks [3]int, classes, maxBatch int, ro ResNetOptions) (*nn.Network[T], error) {
	if classes < 2 {
		return nil, fmt.Errorf("resnet: %d classes", classes)
	}
	layers := []nn.Layer[T]{conv3x3[T](in.C, 16, 1, ro.WeightStd), nn.NewGroupNorm[T](resnetGroups, 16, true), nn.NewReLU[T]()}
	cin := 16
	for s, width := range []int{16, 32, 64} {
		for b := range blocks[s] {
			stride := 1
			if s > 0 && b == 0 {
				stride = 2
			}
			layers = append(layers, basicBlock[T](cin, width, stride, ro.WeightStd), nn.NewReLU[T]())
			cin = width
		}
	}
	layers = append(layers, nn.NewGlobalAvgPool[T](), nn.NewLinear[T](64, classes, true))
	return nn.NewNetwork(in, maxBatch, &nn.SoftmaxCrossEntropy[T]{}, layers...)
}

// CIFAR is the per-sample shape of CIFAR-10 images.
var CIFAR = nn.Shape{C: 3, H: 32, W: 32}

func initNet(net *nn.Network[float32], seed uint64) {
	net.Init(rng.New(seed).Child("models/init"))
}

// NewLogisticRegression returns LogisticRegressionNet as a PerSampleModel.
func NewLogisticRegression(d, classes int, o Options) (*Net, error) {
	net, err := LogisticRegressionNet[float32](d, classes, o.maxBatch(256))
	if err != nil {
		return nil, err
	}
	return newNet(fmt.Sprintf("logreg(%d,%d)", d, classes), net, true), nil
}

// NewLinearRegression returns LinearRegressionNet as a PerSampleModel.
func NewLinearRegression(d int, o Options) (*Net, error) {
	net, err := LinearRegressionNet[float32](d, o.maxBatch(256))
	if err != nil {
		return nil, err
	}
	return newNet(fmt.Sprintf("linreg(%d)", d), net, false), nil
}

// NewMLP returns MLPNet as a PerSampleModel, initialised from o.Seed.
func NewMLP(in int, widths []int, out int, activation string, o Options) (*Net, error) {
	net, err := MLPNet[float32](in, widths, out, activation, o.maxBatch(256))
	if err != nil {
		return nil, err
	}
	initNet(net, o.Seed)
	parts := []string{fmt.Sprint(in)}
	for _, w := range widths {
		parts = append(parts, fmt.Sprint(w))
	}
	return newNet(fmt.Sprintf("mlp(%s,%d,%s)", strings.Join(parts, ","), out, activation), net, true), nil
}

// NewMNISTCNN returns MNISTCNNNet as a PerSampleModel, initialised from
// o.Seed.
func NewMNISTCNN(o Options) (*Net, error) { return NewMNISTCNNClasses(10, o) }

// NewMNISTCNNClasses returns the MNIST CNN with classes outputs, initialised
// from o.Seed. Its architecture name is "mnistcnn" for 10 classes (as
// before class counts were a choice, so older files still load) and
// "mnistcnn(k)" otherwise.
func NewMNISTCNNClasses(classes int, o Options) (*Net, error) {
	net, err := MNISTCNNNetClasses[float32](classes, o.maxBatch(64))
	if err != nil {
		return nil, err
	}
	initNet(net, o.Seed)
	arch := "mnistcnn"
	if classes != 10 {
		arch = fmt.Sprintf("mnistcnn(%d)", classes)
	}
	return newNet(arch, net, true), nil
}

// NewResNet20GN returns ResNet-20 with GroupNorm for 3×32×32 inputs
// (ResNetGNNet with blocks {3,3,3}; 272,474 parameters for 10 classes).
func NewResNet20GN(classes int, o Options) (*Net, error) {
	net, err := ResNetGNNetWith[float32](CIFAR, [3]int{3, 3, 3}, classes, o.maxBatch(64), ResNetOptions{WeightStd: o.weightStd})
	if err != nil {
		return nil, err
	}
	initNet(net, o.Seed)
	return newNet(fmt.Sprintf("resnet20gn%s(%d)", wsSuffix(o.weightStd), classes), net, true), nil
}

// NewResNet22 returns the ResNet22 of paper 003 for 3×32×32 inputs
// (docs/twice-sampling.md#paper-tables). The paper gives only the name and d =
// 291,898; this is our reconstruction, ResNetGNNet with blocks {3,4,3} (2·10
// block convolutions + stem + FC = 22 weight layers), 291,034 parameters for
// 10 classes, 0.3% below the paper's count.
func NewResNet22(classes int, o Options) (*Net, error) {
	net, err := ResNetGNNetWith[float32](CIFAR, [3]int{3, 4, 3}, classes, o.maxBatch(64), ResNetOptions{WeightStd: o.weightStd})
	if err != nil {
		return nil, err
	}
	initNet(net, o.Seed)
	return newNet(fmt.Sprintf("resnet22gn%s(%d)", wsSuffix(o.weightStd), classes), net, true), nil
}

func wsSuffix(ws bool) string {
	if ws {
		return "-ws"
	}
	return ""
}
