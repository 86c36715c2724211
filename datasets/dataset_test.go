package datasets

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func tinyDataset() *Dataset {
	return &Dataset{Name: "t", X: []float32{0, 1, 10, 11, 20, 21, 30, 31, 40, 41}, Y: []int{0, 1, 2, 0, 1}, Shape: []int{2}, NumClasses: 3}
}

func TestGatherSubset(t *testing.T) {
	d := tinyDataset()
	x := make([]float32, 6)
	y := make([]int, 3)
	d.Gather([]int{4, 0, 4}, x, y)
	if !slices.Equal(x, []float32{40, 41, 0, 1, 40, 41}) || !slices.Equal(y, []int{1, 0, 1}) {
		t.Errorf("Gather: x %v y %v", x, y)
	}
	if n := testing.AllocsPerRun(100, func() { d.Gather([]int{1, 2}, x, y) }); n != 0 {
		t.Errorf("Gather allocates %v times", n)
	}
	s := d.Subset([]int{3, 1})
	if !slices.Equal(s.X, []float32{30, 31, 10, 11}) || !slices.Equal(s.Y, []int{0, 1}) || s.NumClasses != 3 {
		t.Errorf("Subset: %+v", s)
	}
	s.X[0] = -1 // a copy, not a view
	if d.X[6] != 30 {
		t.Error("Subset shares memory with the original")
	}
	defer func() {
		if recover() == nil {
			t.Error("Gather into short buffers did not panic")
		}
	}()
	d.Gather([]int{0, 1}, x[:3], y)
}

func TestSplit(t *testing.T) {
	n := 101
	d := &Dataset{Name: "s", X: make([]float32, n), Y: make([]int, n), Shape: []int{1}, NumClasses: 1}
	for i := range n {
		d.X[i] = float32(i)
	}
	tr, te := d.Split(0.8, 7)
	if tr.N() != 81 || te.N() != 20 {
		t.Fatalf("split sizes %d/%d, want 81/20", tr.N(), te.N())
	}
	all := append(slices.Clone(tr.X), te.X...)
	slices.Sort(all)
	for i, v := range all {
		if v != float32(i) {
			t.Fatalf("split is not a partition: %v", all)
		}
	}
	tr2, _ := d.Split(0.8, 7)
	tr3, _ := d.Split(0.8, 8)
	if !slices.Equal(tr.X, tr2.X) || slices.Equal(tr.X, tr3.X) {
		t.Error("Split is not reproducible by seed, or ignores it")
	}
	if slices.IsSorted(tr.X) {
		t.Error("Split did not shuffle")
	}
}

func TestFeatureStats(t *testing.T) {
	nan := float32(math.NaN())
	d := &Dataset{Name: "f", Shape: []int{3}, NumClasses: 1, Y: make([]int, 4), X: []float32{
		1, nan, 1e6 + 1,
		2, nan, 1e6 + 2,
		4, 5, 1e6 + 3,
		nan, nan, 1e6 + 4,
	}}
	s := d.FeatureStats()
	// Two-pass reference: feature 0 = {1,2,4}: mean 7/3, var ((4/3)²+(1/3)²+(5/3)²)/3 = 14/9.
	want := Stats{
		Count: []int{3, 1, 4},
		Mean:  []float64{7.0 / 3, 5, 1e6 + 2.5},
		Std:   []float64{math.Sqrt(14.0 / 9), 0, math.Sqrt(1.25)},
		Min:   []float64{1, 5, 1e6 + 1},
		Max:   []float64{4, 5, 1e6 + 4},
	}
	if !slices.Equal(s.Count, want.Count) {
		t.Errorf("count %v, want %v", s.Count, want.Count)
	}
	for j := range 3 {
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"mean", s.Mean[j], want.Mean[j]}, {"std", s.Std[j], want.Std[j]}, {"min", s.Min[j], want.Min[j]}, {"max", s.Max[j], want.Max[j]}} {
			if math.Abs(c.got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
				t.Errorf("feature %d %s = %v, want %v", j, c.name, c.got, c.want)
			}
		}
	}
	allNaN := &Dataset{Name: "n", Shape: []int{1}, NumClasses: 1, Y: []int{0}, X: []float32{nan}}
	if s := allNaN.FeatureStats(); !math.IsNaN(s.Mean[0]) || s.Count[0] != 0 {
		t.Errorf("all-NaN feature: %+v", s)
	}
}

func TestValidate(t *testing.T) {
	bad := []*Dataset{
		{Name: "shape", X: []float32{1}, Y: []int{0}, Shape: nil, NumClasses: 1},
		{Name: "len", X: []float32{1, 2, 3}, Y: []int{0}, Shape: []int{2}, NumClasses: 1},
		{Name: "label", X: []float32{1}, Y: []int{3}, Shape: []int{1}, NumClasses: 2},
		{Name: "classes", X: []float32{1}, Y: []int{0}, Shape: []int{1}, NumClasses: 0},
	}
	for _, d := range bad {
		if err := d.Validate(); err == nil || !errors.Is(err, ErrBadData) {
			t.Errorf("%s: Validate returned %v, want an error wrapping ErrBadData", d.Name, err)
		}
	}
	if err := tinyDataset().Validate(); err != nil {
		t.Error(err)
	}
}
