package mask

import (
	"math"
	"testing"

	"github.com/dptrain/dptrain/rng"
)

// The fused masked passes against their definition, coordinate by
// coordinate and bit for bit: scale (and clamp) every coordinate, then add
// those in the mask.
func TestMaskFusedAdds(t *testing.T) {
	s := rng.New(3)
	for _, n := range []int{1, 63, 64, 65, 1000} {
		m := New(n)
		for i := range n {
			if s.Float64() < 0.4 {
				m.Set(i)
			}
		}
		v := make([]float32, n)
		s.FillNormal(v, 2)
		for _, tc := range []struct{ s, c float32 }{{1, 1}, {0.37, 0.5}, {3, 100}, {0, 1}} {
			got1, want1 := make([]float32, n), make([]float32, n)
			got2, want2 := make([]float32, n), make([]float32, n)
			for i := range n {
				got1[i], want1[i] = float32(i), float32(i)
				got2[i], want2[i] = float32(-i), float32(-i)
			}
			m.AddScaledMaskedTo(got1, v, tc.s)
			m.AddClampedMaskedTo(got2, v, tc.s, tc.c)
			for i, x := range v {
				if !m.Has(i) {
					continue
				}
				y := float32(tc.s * x)
				want1[i] += y
				want2[i] += float32(math.Max(-float64(tc.c), math.Min(float64(tc.c), float64(y))))
			}
			for i := range n {
				if got1[i] != want1[i] || got2[i] != want2[i] {
					t.Fatalf("n=%d s=%v c=%v coordinate %d (in mask %v): scaled %v want %v, clamped %v want %v",
						n, tc.s, tc.c, i, m.Has(i), got1[i], want1[i], got2[i], want2[i])
				}
			}
		}
	}
}

// AddOuterMasked equals materialising the row d·a and adding it with
// AddScaledMaskedTo / AddClampedMaskedTo, bit for bit, at offsets that do
// and do not align with the mask's words.
func TestAddOuterMasked(t *testing.T) {
	s := rng.New(5)
	const n = 300
	m := New(n)
	for i := range n {
		if s.Float64() < 0.5 {
			m.Set(i)
		}
	}
	for _, tc := range []struct {
		off, len int
		s, cinf  float32
	}{{0, 64, 1, 0}, {0, 300, 0.3, 0}, {5, 70, 0.7, 0.05}, {63, 2, 2, 0}, {130, 170, 0.9, 0.2}, {299, 1, 1, 0.01}} {
		a := make([]float32, tc.len)
		s.FillNormal(a, 1)
		d := float32(s.NormFloat64())
		row := make([]float32, n) // the materialised gradient: d·a at [off, off+len)
		for c, v := range a {
			row[tc.off+c] = d * v
		}
		got, want := make([]float32, n), make([]float32, n)
		m.AddOuterMasked(got, tc.off, d, a, tc.s, tc.cinf)
		if tc.cinf > 0 {
			m.AddClampedMaskedTo(want, row, tc.s, tc.cinf)
		} else {
			m.AddScaledMaskedTo(want, row, tc.s)
		}
		for i := range n {
			if got[i] != want[i] {
				t.Fatalf("%+v: coordinate %d = %v, materialised %v", tc, i, got[i], want[i])
			}
		}
	}
}
