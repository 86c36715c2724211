package datasets

import (
	"errors"
	"math"
	"testing"
)

func TestFromSlices(t *testing.T) {
	ds, err := FromSlices("t", [][]float32{{1, 2}, {3, 4}, {5, 6}}, []int{0, 2, 1})
	if err != nil {
		t.Fatal(err)
	}
	if ds.N() != 3 || ds.Dim() != 2 || ds.NumClasses != 3 || ds.Row(1)[1] != 4 {
		t.Fatalf("got N=%d dim=%d K=%d row1=%v", ds.N(), ds.Dim(), ds.NumClasses, ds.Row(1))
	}
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name   string
		rows   [][]float32
		labels []int
	}{
		{"empty", nil, nil},
		{"count", [][]float32{{1}}, []int{0, 1}},
		{"ragged", [][]float32{{1, 2}, {3}}, []int{0, 1}},
		{"negative label", [][]float32{{1}, {2}}, []int{0, -1}},
		{"nan", [][]float32{{1}, {nan}}, []int{0, 1}},
	} {
		if _, err := FromSlices(tc.name, tc.rows, tc.labels); !errors.Is(err, ErrBadData) {
			t.Errorf("%s: err = %v, want ErrBadData", tc.name, err)
		}
	}
}
