package repro

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"gonum.org/v1/plot"
)

func TestLogGrid(t *testing.T) {
	for _, tc := range []struct {
		dense, max, perDecade int
		want                  []int
	}{
		{3, 100, 1, []int{1, 2, 3, 10, 100}},
		{0, 1000, 2, []int{1, 3, 10, 32, 100, 316, 1000}},
		{5, 4, 1, []int{1, 2, 3, 4}},
		{2, 50, 1, []int{1, 2, 10, 50}},
	} {
		if got := LogGrid(tc.dense, tc.max, tc.perDecade); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("LogGrid(%d, %d, %d) = %v, want %v", tc.dense, tc.max, tc.perDecade, got, tc.want)
		}
	}
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		ours, paper float64
		want        string
	}{{1.5, 1, "+0.5 (+50%)"}, {0.9, 1, "-0.1 (-10%)"}, {0.25, 0, "+0.25"}} {
		if got := Diff(tc.ours, tc.paper); got != tc.want {
			t.Errorf("Diff(%v, %v) = %q, want %q", tc.ours, tc.paper, got, tc.want)
		}
	}
}

// AddLine drops points a log axis cannot show (an all-dropped line is no
// error); SavePlot writes both formats.
func TestAddLineAndSavePlot(t *testing.T) {
	p := plot.New()
	p.Y.Scale = plot.LogScale{}
	if err := AddLine(p, "a", []float64{1, 2, 3}, []float64{0, 1, 2}, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := AddLine(p, "all dropped", []float64{1}, []float64{-1}, 1, true); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "sub", "plot")
	if err := SavePlot(p, 3, 2, base); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".png", ".svg"} {
		if st, err := os.Stat(base + ext); err != nil || st.Size() == 0 {
			t.Errorf("%s%s: %v", base, ext, err)
		}
	}
}
