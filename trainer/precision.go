package trainer

import (
	"fmt"

	"github.com/dptrain/dptrain/clip"
	"github.com/dptrain/dptrain/models/nn"
)

// usePrecision switches the engine's matrix products to the run's
// precision and returns the function that switches them back. With bf16
// the norm-only path also clips to C/nn.BF16NormFactor (newGradients; see
// docs/precision.md): the noise and the account keep C.
func usePrecision(p Precision) (restore func(), err error) {
	if !p.BF16() {
		return func() {}, nil
	}
	restore, err = nn.WithGEMMBackend("bf16")
	if err != nil {
		return nil, fmt.Errorf("precision bf16: %w", err)
	}
	return restore, nil
}

// precisionMargin is the norm-only path's clipper: nc, or with bf16 nc
// clipping to C/nn.BF16NormFactor, which keeps each example's contribution
// within C although the sum's operands are rounded after the norms were
// computed (docs/precision.md).
func precisionMargin(nc clip.NormClipper, p Precision) clip.NormClipper {
	if !p.BF16() {
		return nc
	}
	return clip.WithNormMargin(nc, nn.BF16NormFactor)
}
