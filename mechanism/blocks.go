package mechanism

import (
	"fmt"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/clip"
)

// accountantBlocks describes a clipper's sensitivity blocks to the
// twice-sampling accountant (accountant.Block: Dim, C2, D0, Sigma) with
// per-block noise standard deviations sigma (absolute, on the sum): one per
// block, or a single value for every block. It lives here, not in clip, so
// that clip knows nothing of the accountants.
func accountantBlocks(s clip.Sensitivity, sigma []float64) ([]accountant.Block, error) {
	if len(sigma) != 1 && len(sigma) != len(s.Blocks) {
		return nil, fmt.Errorf("%d noise stds for %d blocks", len(sigma), len(s.Blocks))
	}
	out := make([]accountant.Block, len(s.Blocks))
	for j, b := range s.Blocks {
		sg := sigma[0]
		if len(sigma) > 1 {
			sg = sigma[j]
		}
		out[j] = accountant.Block{Dim: b.Dim, C2: b.C2, D0: b.D0, Sigma: sg}
		if err := out[j].Validate(); err != nil {
			return nil, fmt.Errorf("block %d (%s): %w", j, b.Name, err)
		}
	}
	return out, nil
}
