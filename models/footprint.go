package models

import (
	"fmt"

	"github.com/dptrain/dptrain/internal/sysmem"
)

// footprint is the number of parameters of the models whose size comes
// from the caller (logreg, linreg, mlp: the data's width, the classes, the
// hidden widths) and a lower bound on the bytes building one allocates:
// float32 parameters and their gradient sum, and the activations and
// their gradients for a physical batch of maxBatch. Counted in float64 so
// that no width overflows. For the image models, whose parameters are
// fixed (params 0 here), only the input and output of each example in the
// batch are counted: a loose lower bound, enough to refuse a physical
// batch of 1e9. ok is false for an architecture it does not know.
func (s Spec) footprint(maxBatch int) (params, bytes float64, ok bool) {
	classes := float64(s.Classes)
	units := float64(s.InputSize)
	image := func(c, h, w int) (float64, float64, bool) {
		units := float64(c)*float64(h)*float64(w) + float64(defaultClasses(s.Classes))
		return 0, 4 * 2 * float64(maxBatch) * units, true
	}
	switch s.Arch {
	case "mnistcnn", "cnn":
		return image(1, 28, 28)
	case "resnet20gn", "resnet20", "resnet22":
		return image(3, 32, 32)
	case "scatcnn":
		if len(s.Shape) != 3 {
			return 0, 0, false
		}
		return image(s.Shape[0], s.Shape[1], s.Shape[2])
	case "logreg":
		params = (float64(s.InputSize) + 1) * classes
		units += classes
	case "linreg":
		params = float64(s.InputSize) + 1
		units++
	case "mlp":
		prev := float64(s.InputSize)
		for _, w := range s.Widths {
			params += (prev + 1) * float64(w)
			units += float64(w)
			prev = float64(w)
		}
		params += (prev + 1) * classes
		units += classes
	default:
		return 0, 0, false
	}
	return params, 4 * (2*params + 2*float64(maxBatch)*units), true
}

// checkFootprint refuses, before anything is allocated, a model that
// cannot fit in the memory available (sysmem.ErrTooLarge).
func checkFootprint(s Spec, o Options) error {
	def := 256 // the table models' default physical batch (zoo.go)
	switch s.Arch {
	case "logreg", "linreg", "mlp":
	default:
		def = 64 // the image models'
	}
	params, bytes, ok := s.footprint(o.maxBatch(def))
	if !ok {
		return nil
	}
	what := "model " + s.Arch
	if s.InputSize > 0 {
		what += fmt.Sprintf(" with %d inputs", s.InputSize)
	}
	if len(s.Widths) > 0 && s.Arch == "mlp" {
		what += fmt.Sprintf(", hidden widths %v", s.Widths)
	}
	what += fmt.Sprintf(" and a physical batch of %d", o.maxBatch(def))
	if params > 0 {
		what += fmt.Sprintf(" (%.3g parameters)", params)
	}
	return sysmem.Check(what, bytes)
}
