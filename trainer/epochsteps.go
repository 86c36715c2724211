package trainer

import (
	"fmt"
	"math"
)

// minNormal is the smallest normal float64 (2^-1022): a variance below it
// has lost its precision and rounds towards 0.
const minNormal = 0x1p-1022

// maxRunSteps bounds the step count a run may ask for: far beyond any run
// that can finish, and small enough that step arithmetic never overflows.
const maxRunSteps = 1 << 40

// epochSteps is the step count of epochs passes over n examples in batches
// of batch: ceil(epochs·n/batch), refused (as ErrInvalidConfig) when it
// exceeds maxRunSteps rather than converted to a negative int.
func epochSteps(epochs float64, n, batch int) (int, error) {
	steps := math.Ceil(epochs * float64(n) / float64(batch))
	if !(steps <= maxRunSteps) {
		return 0, fmt.Errorf("%w: epochs %v at batch size %d asks for %.3g steps; at most %d (set fewer epochs or steps)", ErrInvalidConfig, epochs, batch, steps, int64(maxRunSteps))
	}
	return int(steps), nil
}
