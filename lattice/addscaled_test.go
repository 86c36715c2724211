package lattice

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// TestAddScaledKernelsMatchGo checks every vector kernel this CPU runs
// against the scalar loop, bit for bit, over lengths around the vector
// widths, factors of every size a clip produces (and beyond, where the AVX2
// kernel must hand the rest to the scalar loop), and inputs with NaN and
// infinities (which the scalar conversion maps to the minimum int64).
func TestAddScaledKernelsMatchGo(t *testing.T) {
	if len(addScaledKernels) == 0 {
		t.Log("no vector kernels in this build (not amd64, or the purego tag): nothing to compare")
	}
	r := rng.New(11)
	for _, k := range addScaledKernels {
		t.Run(k.name, func(t *testing.T) {
			if !k.ok {
				t.Skipf("this CPU lacks the %s instructions", k.name)
			}
			for _, tc := range []struct {
				name   string
				n      int
				factor float64
				edit   func(x []float32)
			}{
				{"empty", 0, 1, nil},
				{"short", 7, 0x1p20, nil},
				{"eight", 8, 0x1p20, nil},
				{"odd", 37, 0x1p30 / 3, nil},
				{"long", 2051, 0x1p40 * 0.7, nil},
				{"near 2^51", 64, 0x1p51 * 0.999, nil},
				{"past 2^51", 64, 0x1p52 * 1.5, nil},
				{"past int64", 40, 0x1p70, nil},
				{"negative factor", 33, -0x1p20, nil},
				{"nan", 48, 0x1p20, func(x []float32) { x[13] = float32(math.NaN()) }},
				{"inf", 48, 0x1p20, func(x []float32) { x[40] = float32(math.Inf(-1)) }},
				{"halves", 24, 1, func(x []float32) {
					for j := range x {
						x[j] = float32(j)/2 - 6 // exact ties must truncate, not round
					}
				}},
			} {
				x := make([]float32, tc.n)
				for j := range x {
					x[j] = float32(r.NormFloat64())
				}
				if tc.edit != nil {
					tc.edit(x)
				}
				want, got := make([]int64, tc.n), make([]int64, tc.n)
				for j := range want {
					want[j] = int64(r.Uint64() >> 20)
					got[j] = want[j]
				}
				addScaledGo(x, tc.factor, want)
				done := k.fn(x, tc.factor, got)
				if done > tc.n || done%4 != 0 {
					t.Fatalf("%s: kernel reports %d of %d done", tc.name, done, tc.n)
				}
				addScaledGo(x[done:], tc.factor, got[done:])
				for j := range want {
					if got[j] != want[j] {
						t.Fatalf("%s: acc[%d] = %d, the scalar loop gives %d (x = %v)", tc.name, j, got[j], want[j], x[j])
					}
				}
			}
		})
	}
}
