package datasets

import (
	"errors"
	"math"
	"slices"
	"strings"
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

func TestSetSchemaAndSelectColumns(t *testing.T) {
	d, err := FromSlices("t", [][]float32{{1, 2, 3}, {4, 5, 6}}, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ cols, classes []string }{
		{[]string{"a", "b"}, nil},
		{[]string{"a", "b", "a"}, nil},
		{[]string{"a", " b", "c"}, nil},
		{nil, []string{"only"}},
		{nil, []string{"x", "x"}},
	} {
		if err := d.SetSchema(bad.cols, bad.classes); err == nil {
			t.Errorf("SetSchema(%q, %q) accepted", bad.cols, bad.classes)
		}
	}
	if err := d.SetSchema([]string{"a", "b", "c"}, []string{"no", "yes", "maybe"}); err != nil {
		t.Fatal(err)
	}
	if d.NumClasses != 3 || !slices.Equal(d.ClassNames, []string{"no", "yes", "maybe"}) {
		t.Errorf("classes %q, %d", d.ClassNames, d.NumClasses)
	}
	s, err := d.SelectColumns([]string{"c", "a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	// Row r's feature i is the value of column names[i]: brute force by name.
	for r := range 2 {
		for i, n := range s.Columns {
			if want := d.X[r*3+slices.Index(d.Columns, n)]; s.X[r*3+i] != want {
				t.Errorf("row %d column %s: %v, want %v", r, n, s.X[r*3+i], want)
			}
		}
	}
	if !slices.Equal(s.Y, d.Y) || !slices.Equal(s.ClassNames, d.ClassNames) {
		t.Errorf("labels %v classes %q", s.Y, s.ClassNames)
	}
	if _, err := d.SelectColumns([]string{"a", "b", "z"}); !errors.Is(err, ErrColumns) || !strings.Contains(err.Error(), `"z"`) || !strings.Contains(err.Error(), `"c"`) {
		t.Errorf("renamed column: %v", err)
	}
}
