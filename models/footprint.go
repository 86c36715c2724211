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
// that no width overflows. ok is false for the architectures of fixed
// size.
func (s Spec) footprint(maxBatch int) (params, bytes float64, ok bool) {
	classes := float64(s.Classes)
	units := float64(s.InputSize)
	switch s.Arch {
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
	params, bytes, ok := s.footprint(o.maxBatch(256))
	if !ok {
		return nil
	}
	what := fmt.Sprintf("model %s with %d inputs", s.Arch, s.InputSize)
	if len(s.Widths) > 0 && s.Arch == "mlp" {
		what += fmt.Sprintf(", hidden widths %v", s.Widths)
	}
	what += fmt.Sprintf(" and a physical batch of %d (%.3g parameters)", o.maxBatch(256), params)
	return sysmem.Check(what, bytes)
}
