package sampler

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// A sum built range by range with AddClampedMaskedRange (vector kernel on
// whole words where the CPU has it) equals AddClampedMaskedTo of the whole
// row bit for bit, for cuts at and off word boundaries, at several mask
// rates, with clamped coordinates and signed zeros in the rows.
func TestAddClampedMaskedRange(t *testing.T) {
	const n = 1000
	s := rng.New(11)
	for _, q2 := range []float64{0.5, 0.3, 0.02, 1} {
		tw, err := NewTwice(10, n, 0.5, q2, rng.New(5))
		if err != nil {
			t.Fatal(err)
		}
		for _, cuts := range [][]int{{1000}, {64, 936}, {3, 61, 200, 736}, {130, 1, 869}, {999, 1}} {
			want, got := make([]float32, n), make([]float32, n)
			for range 5 { // five examples into the same sums
				m := NewMask(n)
				tw.FillMask(m)
				v := make([]float32, n)
				for j := range v {
					v[j] = float32(s.NormFloat64() * 3)
				}
				v[7], v[500] = float32(math.Copysign(0, -1)), 0
				sc, c := float32(0.7), float32(1.5)
				m.AddClampedMaskedTo(want, v, sc, c)
				off := 0
				for _, k := range cuts {
					m.AddClampedMaskedRange(got, off, v[off:off+k], sc, c)
					off += k
				}
			}
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("q2=%v cuts %v: coordinate %d is %v, want %v", q2, cuts, j, got[j], want[j])
				}
			}
		}
	}
}
