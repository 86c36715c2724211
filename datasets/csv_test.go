package datasets

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadCSV(t *testing.T) {
	in := "a,label,b\n1.5,1,NA\n,0,2\n-3,2,NaN\n4e1,1,?\n"
	d, err := ReadCSV(strings.NewReader(in), "t", CSVOptions{Header: true, Label: "label", AllowMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	want := []float64{1.5, nan, nan, 2, -3, nan, 40, nan}
	for i, v := range d.X {
		w := want[i]
		if !(float64(v) == w || math.IsNaN(w) && math.IsNaN(float64(v))) {
			t.Errorf("X[%d] = %v, want %v", i, v, w)
		}
	}
	if !slices.Equal(d.Y, []int{1, 0, 2, 1}) || d.NumClasses != 3 || !slices.Equal(d.Shape, []int{2}) {
		t.Errorf("Y %v classes %d shape %v", d.Y, d.NumClasses, d.Shape)
	}
	vals, recs := d.CountMissing()
	if vals != 4 || recs != 4 {
		t.Errorf("missing %d values in %d records, want 4 in 4", vals, recs)
	}
	if err := d.CheckFinite(); err == nil || !strings.Contains(err.Error(), "feature 1") || !errors.Is(err, ErrBadData) {
		t.Errorf("CheckFinite: %v", err)
	}
}

func TestReadCSVStringLabelsAndIndex(t *testing.T) {
	in := "1;ckd\n2;notckd\n3;ckd\n"
	d, err := ReadCSV(strings.NewReader(in), "t", CSVOptions{LabelIndex: -1, Comma: ';'})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Y, []int{0, 1, 0}) || !slices.Equal(d.ClassNames, []string{"ckd", "notckd"}) || !slices.Equal(d.X, []float32{1, 2, 3}) {
		t.Errorf("Y %v names %v X %v", d.Y, d.ClassNames, d.X)
	}
	d, err = ReadCSV(strings.NewReader("0,5,6\n1,7,8\n"), "t", CSVOptions{LabelIndex: 0})
	if err != nil || !slices.Equal(d.Y, []int{0, 1}) || !slices.Equal(d.X, []float32{5, 6, 7, 8}) {
		t.Errorf("label index 0: %v %v %v", err, d.Y, d.X)
	}
}

func TestReadCSVErrors(t *testing.T) {
	tests := []struct {
		name, in string
		opts     CSVOptions
		want     string
	}{
		{"missing not allowed", "1,NA,0\n", CSVOptions{LabelIndex: -1}, "column 2: a missing value"},
		{"missing label", "1,2,\n", CSVOptions{LabelIndex: -1, AllowMissing: true}, "missing label"},
		{"not a number", "h1,h2\n1,0\nx,1\n", CSVOptions{Header: true, LabelIndex: 1}, "column \"h1\": a value that is not a number"},
		{"infinite", "inf,0\n", CSVOptions{LabelIndex: 1}, "infinite"},
		{"float32 overflow", "1e39,0\n", CSVOptions{LabelIndex: 1}, "too large for 32-bit"},
		{"ragged", "1,2,0\n1,0\n", CSVOptions{LabelIndex: -1}, "wrong number of fields"},
		{"no label column", "a,b\n1,0\n", CSVOptions{Header: true, Label: "y"}, "no column named"},
		{"label without header", "1,0\n", CSVOptions{Label: "y"}, "no header"},
		{"index out of range", "1,0\n", CSVOptions{LabelIndex: 5}, "outside"},
		{"one column", "1\n", CSVOptions{}, "at least one feature"},
		{"empty", "", CSVOptions{}, "empty file"},
		{"header only", "a,b\n", CSVOptions{Header: true}, "no data rows"},
		{"bare quote", "1,\"2\n", CSVOptions{}, "quote"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		p := filepath.Join(dir, "x.csv")
		writeFile(t, p, []byte(tc.in))
		_, err := LoadCSV(p, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) || !errors.Is(err, ErrBadData) {
			t.Errorf("%s: err %v, want %q, the file name and ErrBadData", tc.name, err, tc.want)
		}
	}
}
