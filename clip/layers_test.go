package clip

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// laneSum fed a row in pieces of any sizes gives SumSquares' bits (the
// materialised norm) and the row's largest |coordinate|, for rows with and
// without a remainder: with the Go loop and with each vector kernel (those
// this CPU or build lacks are skipped with the reason).
func TestLaneSumMatchesSumSquares(t *testing.T) {
	kernels := append([]laneSumKernel{{name: "go", ok: true}}, laneSumKernels...)
	if len(laneSumKernels) == 0 {
		t.Log("no vector kernels in this build (not amd64, or the purego tag): the Go loop only")
	}
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			if !k.ok {
				t.Skipf("this CPU lacks the %s instructions", k.name)
			}
			defer func(old func(v []float32, acc *[4]float64) uint32) { laneSumVec = old }(laneSumVec)
			laneSumVec = k.fn
			checkLaneSum(t)
		})
	}
}

func checkLaneSum(t *testing.T) {
	s := rng.New(7)
	for _, tc := range []struct {
		n      int
		pieces []int
	}{
		{1, []int{1}},
		{7, []int{7}},
		{7, []int{3, 4}},
		{13, []int{1, 1, 1, 10}},
		{1001, []int{5, 6, 990}},
		{4099, []int{2048, 3, 2045, 3}},
		{2304, []int{432, 32, 2304 - 464}},
		{10, []int{9, 1}},
		{36, []int{36}},
		{44, []int{2, 42}},
		{4107, []int{1, 4098, 8}},
	} {
		row := make([]float32, tc.n)
		s.FillNormal(row, 3)
		for j := range row {
			row[j] *= float32(math.Exp(12 * s.Float64())) // spread magnitudes so the order shows
		}
		acc := laneSum{n4: tc.n &^ 3}
		off := 0
		var top float32
		for _, p := range tc.pieces {
			top = max(top, acc.add(row[off:off+p]))
			off += p
		}
		if want := maxAbs(row); top != want {
			t.Errorf("n=%d pieces %v: max |v| %v, want %v", tc.n, tc.pieces, top, want)
		}
		if off != tc.n {
			t.Fatalf("pieces cover %d of %d", off, tc.n)
		}
		if got, want := acc.total(), SumSquares(row); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("n=%d pieces %v: %v, SumSquares %v", tc.n, tc.pieces, got, want)
		}
	}
}
