package gemm_test

import (
	"fmt"

	"github.com/dptrain/dptrain/internal/gemm"
)

// A linear layer's forward pass on a batch: out = X·Wᵀ (beta = 0, so out's old
// contents are ignored), with X the
// 2×3 batch (one sample per row) and W the 2×3 weights (one output per row),
// both row-major.
func ExampleSgemm() {
	x := []float32{
		1, 2, 3,
		4, 5, 6,
	}
	w := []float32{
		1, 0, -1,
		0.5, 0.5, 0.5,
	}
	out := make([]float32, 2*2)
	gemm.Sgemm(false, true, 2, 2, 3, 1, x, 3, w, 3, 0, out, 2)
	fmt.Println(out)
	// Output: [-2 3 -2 7.5]
}
