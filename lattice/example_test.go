package lattice_test

import (
	"fmt"
	"math"

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
	// [1.7368 1.4649 -0.0239]
}

// A noisy count: the count plus exactly drawn round(N(0, σ²)), an integer.
func ExampleCountNoise() {
	cn, err := lattice.NewCountNoise(2.5) // σ = 2.5
	if err != nil {
		panic(err)
	}
	v, err := cn.Release(137, rng.New(1))
	if err != nil {
		panic(err)
	}
	fmt.Println(v)
	// Output:
	// 138
}

// A private sum of real vectors of L2 norm at most 2: each record is put on
// the lattice 2·2⁻ᵏℤ² (k from the public record count), summed exactly, and
// released as γ·(S + round(Z)) with std σ·2 per coordinate.
func ExampleSum() {
	recs := [][]float64{{1, 1}, {0.5, -0.25}, {30, 40}} // the last is clipped to norm 2
	s, err := lattice.NewSum(2, 0.8, 2, lattice.SumExponent(len(recs)))
	if err != nil {
		panic(err)
	}
	for _, x := range recs {
		if _, err := s.Add(x); err != nil {
			panic(err)
		}
	}
	out, err := s.Release(rng.New(1))
	if err != nil {
		panic(err)
	}
	fmt.Printf("γ = 2^%d, released %.4f\n", int(math.Log2(s.Gamma())), out)
	// Output:
	// γ = 2^-39, released [3.0579 2.9554]
}
