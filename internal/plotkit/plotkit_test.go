package plotkit

import (
	"bytes"
	"image/png"
	"math"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func labelled(ts []plot.Tick) []float64 {
	var v []float64
	for _, t := range ts {
		if !t.IsMinor() {
			v = append(v, t.Value)
		}
	}
	return v
}

// isNiceStep reports whether s is 1, 2 or 5 × 10^k.
func isNiceStep(s float64) bool {
	k := math.Floor(math.Log10(s) + 1e-9)
	m := s / math.Pow(10, k)
	for _, want := range []float64{1, 2, 5} {
		if math.Abs(m-want) < 1e-9 {
			return true
		}
	}
	return false
}

func TestTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi   float64
		integer  bool
		step     float64
		minCount int // MinTicks unless the range cannot hold them
	}{
		{0, 1, false, 0.2, 4},
		{0, 3.7, false, 0.5, 4},
		{0, 30, true, 5, 4},
		{0, 100, true, 20, 4},
		{0, 1000, true, 200, 4},
		{0, 2345, true, 500, 4},
		{0, 10000, true, 2000, 4},
		{0, 7, true, 1, 4},
		{0, 3, true, 1, 4},
		{0, 2, true, 1, 3}, // two steps: three ticks at most
		{0, 0.0013, false, 0.0002, 4},
		{0.52, 0.91, false, 0.05, 4},
		{-3, 3, false, 1, 4},
		{1e6, 9e6, false, 2e6, 4},
		{1e6, 8e6, false, 1e6, 4},
		{2.31, 2.34, false, 0.005, 4},
		{0.1, 19.9, false, 5, 3}, // ends between ticks: 5, 10, 15
	} {
		got := Step(tc.lo, tc.hi, tc.integer)
		if math.Abs(got-tc.step) > 1e-12*tc.step {
			t.Errorf("Step(%g, %g, %v) = %g, want %g", tc.lo, tc.hi, tc.integer, got, tc.step)
		}
		if !isNiceStep(got) || (tc.integer && got < 1) {
			t.Errorf("Step(%g, %g, %v) = %g: not a 1/2/5 × 10^k step", tc.lo, tc.hi, tc.integer, got)
		}
		v := labelled(Ticks{Integer: tc.integer}.Ticks(tc.lo, tc.hi))
		if len(v) < tc.minCount || len(v) > MaxTicks {
			t.Errorf("[%g, %g]: %d labelled ticks %v, want %d..%d", tc.lo, tc.hi, len(v), v, tc.minCount, MaxTicks)
		}
		for i, x := range v {
			if x < tc.lo-1e-9 || x > tc.hi+1e-9 {
				t.Errorf("[%g, %g]: tick %g outside the range", tc.lo, tc.hi, x)
			}
			if i > 0 && math.Abs(x-v[i-1]-got) > 1e-9*got {
				t.Errorf("[%g, %g]: ticks %v not %g apart", tc.lo, tc.hi, v, got)
			}
		}
	}
}

// A range that starts on a tick always gets MinTicks..MaxTicks labels,
// whatever its length.
func TestTicksFromZero(t *testing.T) {
	for hi := 3.0; hi < 1e7; hi *= 1.37 {
		for _, integer := range []bool{false, true} {
			n := len(labelled(Ticks{Integer: integer}.Ticks(0, hi)))
			if n < MinTicks || n > MaxTicks {
				t.Fatalf("[0, %g] integer=%v: %d labelled ticks", hi, integer, n)
			}
		}
	}
}

func TestTickLabels(t *testing.T) {
	ts := Ticks{}.Ticks(0, 1)
	var got []string
	for _, tk := range ts {
		if !tk.IsMinor() {
			got = append(got, tk.Label)
		}
	}
	// One decimal for a step of 0.2, on every label.
	want := []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}
	if len(got) != len(want) {
		t.Fatalf("labels %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("labels %q, want %q", got, want)
		}
	}
}

func TestFitBars(t *testing.T) {
	for _, vals := range []plotter.Values{
		{1, 1, 1, 2, 2, 3},
		{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 9},
		{7},
	} {
		p := New("h", "x", "count")
		h, err := plotter.NewHist(vals, 10)
		if err != nil {
			t.Fatal(err)
		}
		p.Plot.Add(h)
		top := FitBars(p.Plot, h)
		tallest := 0.0
		for _, b := range h.Bins {
			tallest = math.Max(tallest, b.Weight)
		}
		if p.Plot.Y.Max != top || top < tallest*(1+Headroom) || p.Plot.Y.Min != 0 {
			t.Fatalf("Y range [%g, %g] (top %g) for tallest bar %g", p.Plot.Y.Min, p.Plot.Y.Max, top, tallest)
		}
		if top > 2*tallest+2 {
			t.Fatalf("top %g wastes the frame above a bar of %g", top, tallest)
		}
	}
}

func TestLayoutAlignsAndKeepsLegendOutside(t *testing.T) {
	a := New("accuracy", "", "accuracy")
	b := New("loss", "step", "a long loss label")
	for _, p := range []*Panel{a, b} {
		StepAxis(p.Plot, 30)
	}
	a.Plot.Y.Min, a.Plot.Y.Max = 0, 1
	b.Plot.Y.Min, b.Plot.Y.Max = 0, 12345.678 // wider tick labels than a's
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 30, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	a.Plot.Add(l)
	a.Add("a rather long legend entry", l)
	c := vgimg.New(7*vg.Inch, 6*vg.Inch)
	dc := draw.New(c)
	cs := Layout(dc, a, b)
	da, db := a.Plot.DataCanvas(cs[0]), b.Plot.DataCanvas(cs[1])
	if math.Abs(float64(da.Min.X-db.Min.X)) > 0.01 || math.Abs(float64(da.Max.X-db.Max.X)) > 0.01 {
		t.Fatalf("data areas not aligned: %v vs %v", da.Rectangle, db.Rectangle)
	}
	leg := legendOf(a)
	r := leg.Rectangle(draw.Canvas{})
	if da.Max.X+legendGap+(r.Max.X-r.Min.X) > dc.Max.X {
		t.Fatalf("legend (%v wide) does not fit right of the data area ending at %v (canvas %v)", r.Max.X-r.Min.X, da.Max.X, dc.Max.X)
	}
	img, err := Render("png", 7*vg.Inch, 3*vg.Inch, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(img)); err != nil {
		t.Fatal(err)
	}
	if _, err := Render("gif", vg.Inch, vg.Inch, a); err == nil {
		t.Fatal("gif rendered")
	}
}
