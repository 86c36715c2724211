package sampler

import "github.com/dptrain/dptrain/sampler/mask"

// Mask is one example's coordinate mask under twice sampling (package
// mask).
type Mask = mask.Mask

// NewMask returns an empty mask over n coordinates.
func NewMask(n int) *Mask { return mask.New(n) }
