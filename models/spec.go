package models

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dptrain/dptrain/models/nn"
)

// Spec names a zoo architecture and its sizes, for callers that pick a model
// from configuration (the CLI, config files).
type Spec struct {
	// Arch is one of "logreg", "linreg", "mlp", "mnistcnn", "resnet20gn",
	// "resnet22".
	Arch string `json:"arch"`
	// InputSize is the number of features of logreg, linreg and mlp (the
	// image models fix their input: 1×28×28 and 3×32×32).
	InputSize int `json:"input_size,omitempty"`
	// Classes is the number of classes (not linreg; 0: 10 for the image
	// models).
	Classes int `json:"classes,omitempty"`
	// Widths are the MLP's hidden layer widths.
	Widths []int `json:"widths,omitempty"`
	// Activation is the MLP's "relu" (default) or "tanh".
	Activation string `json:"activation,omitempty"`
	// Shape is the per-example input shape [C,H,W] of scatcnn (ScatterNet
	// feature maps).
	Shape []int `json:"shape,omitempty"`
	// Norm is the ResNets' normalisation: "groupnorm" (the default and only
	// choice). "batchnorm" is refused with an error naming GroupNorm.
	Norm string `json:"norm,omitempty"`
	// WeightStd makes the ResNets' convolutions weight-standardised
	// (nn.WSConv2d); refused for the other architectures.
	WeightStd bool `json:"weight_std,omitempty"`
}

// New builds the model s describes.
func New(s Spec, o Options) (*Net, error) {
	switch s.Norm {
	case "", "groupnorm", "gn":
	default:
		if _, err := nn.NewNorm[float32](s.Norm, 1, 1); err != nil {
			return nil, fmt.Errorf("model %s: %w", s.Arch, err)
		}
		return nil, fmt.Errorf("model %s: normalisation %q not available (use groupnorm)", s.Arch, s.Norm)
	}
	o.weightStd = s.WeightStd
	if s.WeightStd && !strings.HasPrefix(s.Arch, "resnet") {
		return nil, fmt.Errorf("model %s: weight standardisation is an option of the ResNets only", s.Arch)
	}
	if err := checkFootprint(s, o); err != nil {
		return nil, err
	}
	switch s.Arch {
	case "logreg":
		return NewLogisticRegression(s.InputSize, s.Classes, o)
	case "linreg":
		return NewLinearRegression(s.InputSize, o)
	case "mlp":
		act := s.Activation
		if act == "" {
			act = "relu"
		}
		return NewMLP(s.InputSize, s.Widths, s.Classes, act, o)
	case "mnistcnn", "cnn":
		return NewMNISTCNNClasses(defaultClasses(s.Classes), o)
	case "scatcnn":
		if len(s.Shape) != 3 {
			return nil, fmt.Errorf("model scatcnn: needs the feature shape [C,H,W], got %v", s.Shape)
		}
		return NewScatterCNN(nn.Shape{C: s.Shape[0], H: s.Shape[1], W: s.Shape[2]}, defaultClasses(s.Classes), o)
	case "resnet20gn", "resnet20":
		return NewResNet20GN(defaultClasses(s.Classes), o)
	case "resnet22":
		return NewResNet22(defaultClasses(s.Classes), o)
	}
	return nil, fmt.Errorf("unknown model %q (want logreg, linreg, mlp, mnistcnn, resnet20gn or resnet22)", s.Arch)
}

func defaultClasses(c int) int {
	if c == 0 {
		return 10
	}
	return c
}

// IsBatchNorm reports whether err is the refusal of BatchNorm.
func IsBatchNorm(err error) bool { return errors.Is(err, nn.ErrBatchNorm) }
