package lattice_test

import (
	"fmt"

	"github.com/dptrain/dptrain/lattice"
	"github.com/dptrain/dptrain/rng"
)

// One step of the lattice mechanism: quantise each clipped example into an
// exact int64 sum, then release γ·(S + round(Z)).
func Example() {
	nz, err := lattice.New(1, 1.1, 3, lattice.DefaultK) // C = 1, σ = 1.1, d = 3
	if err != nil {
		panic(err)
	}
	acc := make([]int64, 3)
	for _, x := range [][]float32{{3, 4, 0}, {0.1, 0, -0.2}} {
		fmt.Println(nz.Quantize(x, acc) == lattice.Clipped)
	}
	// (0.6, 0.8, 0)·(1−η) plus float32(0.1, 0, −0.2), in steps of 2⁻⁴⁰,
	// each truncated toward zero.
	fmt.Println(acc)
	out := make([]float32, 3)
	if err := nz.Release(acc, out, rng.New(1)); err != nil {
		panic(err)
	}
	fmt.Printf("%.4f\n", out)
	// Output:
	// true
	// false
	// [769658141081 879609302220 -219902328832]
	// [0.9460 1.2162 -0.5332]
}
