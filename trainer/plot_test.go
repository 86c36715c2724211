package trainer

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/dptrain/dptrain/internal/plotkit"
)

func TestWritePlotsAndMetricsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m, err := openMetrics(filepath.Join(dir, "metrics.jsonl"), false, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for s := 1; s <= 30; s++ {
		r := &Record{Step: s, Loss: 2 / float64(s), Epsilon: map[string]float64{"rdp": 0.1 * float64(s), "hidden": 0.05 * float64(s)}}
		if s%10 == 0 {
			a, b := 0.5+float64(s)/100, 0.55+float64(s)/100
			l := 2 / float64(s)
			r.TestAcc, r.TrainAcc, r.TestLoss = &a, &b, &l
		}
		if err := m.write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.close(); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadMetrics(filepath.Join(dir, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 30 || recs[29].Epsilon["rdp"] != 0.1*30 || recs[9].TestAcc == nil || *recs[9].TestAcc != 0.6 {
		t.Fatalf("round trip lost data: %d records, last %+v", len(recs), recs[len(recs)-1])
	}
	if err := WritePlots(dir, recs, PlotOptions{Delta: 1e-5, TargetEpsilon: 3}); err != nil {
		t.Fatal(err)
	}
	if err := writeDiagnosticsPlot(dir, recs); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"test.png", "epsilon.png", "diagnostics.png"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
			t.Fatalf("%s: tiny image %v", name, b)
		}
	}
	for _, name := range []string{"test.svg", "epsilon.svg"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() < 1000 {
			t.Fatalf("%s missing or empty: %v", name, err)
		}
	}
}

func epsRecords(steps int) []Record {
	recs := make([]Record, steps)
	for i := range recs {
		s := i + 1
		recs[i] = Record{Step: s, Epsilon: map[string]float64{"rdp": 0.1 * float64(s), "pld": 0.08 * float64(s)}}
		if s%10 == 0 {
			a, l := 1-1/float64(s), 2/float64(s)
			recs[i].TestAcc, recs[i].TestLoss = &a, &l
		}
	}
	return recs
}

// The ε plot names δ and, when the run has a target, draws it as a dashed
// line at that height across every step, named in the legend (beside the
// data, not over it).
func TestEpsilonPanelTargetAndDelta(t *testing.T) {
	recs := epsRecords(40)
	for _, tc := range []struct {
		opt        PlotOptions
		wantTarget bool
		wantDelta  string
	}{
		{PlotOptions{Delta: 1e-5, TargetEpsilon: 3}, true, "ε(δ = 1e-05)"},
		{PlotOptions{Delta: 1e-6}, false, "ε(δ = 1e-06)"},
		{PlotOptions{}, false, "δ fixed"},
	} {
		p, err := epsilonPanel(recs, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.Plot.Title.Text, tc.wantDelta) || !strings.Contains(p.Plot.Y.Label.Text, tc.wantDelta) {
			t.Errorf("%+v: title %q, y label %q; want %q in both", tc.opt, p.Plot.Title.Text, p.Plot.Y.Label.Text, tc.wantDelta)
		}
		var names []string
		var target *plotter.Line
		for _, e := range p.Legend {
			names = append(names, e.Name)
			if strings.HasPrefix(e.Name, "target") {
				target, _ = e.Thumbs[0].(*plotter.Line)
			}
		}
		if (target != nil) != tc.wantTarget {
			t.Fatalf("%+v: legend %q, target line present = %v", tc.opt, names, target != nil)
		}
		if !tc.wantTarget {
			continue
		}
		if names[len(names)-1] != "target ε = 3" {
			t.Errorf("legend %q, want the last entry %q", names, "target ε = 3")
		}
		if len(target.Dashes) == 0 {
			t.Error("target line is not dashed")
		}
		if len(target.XYs) != 2 || target.XYs[0].Y != 3 || target.XYs[1].Y != 3 || target.XYs[0].X != 0 || target.XYs[1].X != p.Plot.X.Max {
			t.Errorf("target line %v, want ε = 3 from step 0 to %g", target.XYs, p.Plot.X.Max)
		}
		if p.Plot.Y.Max <= 3 || p.Plot.Y.Min != 0 {
			t.Errorf("Y range [%g, %g] does not hold the target line inside the frame", p.Plot.Y.Min, p.Plot.Y.Max)
		}
	}
}

// Test accuracy and test loss share one step axis: same range, same
// integer ticks, and frames whose left and right edges line up.
func TestTestPanelsAligned(t *testing.T) {
	recs := epsRecords(40)
	// A loss far above 1 widens the loss panel's tick labels.
	for i := range recs {
		if recs[i].TestLoss != nil {
			l := 1234.5 / float64(i+1)
			recs[i].TestLoss = &l
		}
	}
	acc, loss, err := testPanels(recs)
	if err != nil {
		t.Fatal(err)
	}
	if acc.Plot.X.Min != loss.Plot.X.Min || acc.Plot.X.Max != loss.Plot.X.Max || acc.Plot.X.Max != 40 {
		t.Fatalf("step axes [%g, %g] and [%g, %g], want both [0, 40]", acc.Plot.X.Min, acc.Plot.X.Max, loss.Plot.X.Min, loss.Plot.X.Max)
	}
	if acc.Plot.X.Tick.Marker != (plotkit.Ticks{Integer: true}) || loss.Plot.X.Tick.Marker != acc.Plot.X.Tick.Marker {
		t.Fatalf("step axes tick with %#v and %#v, want integer Ticks", acc.Plot.X.Tick.Marker, loss.Plot.X.Tick.Marker)
	}
	dc := draw.New(vgimg.New(7*vg.Inch, 6*vg.Inch))
	cs := plotkit.Layout(dc, acc, loss)
	da, dl := acc.Plot.DataCanvas(cs[0]), loss.Plot.DataCanvas(cs[1])
	if math.Abs(float64(da.Min.X-dl.Min.X)) > 0.01 || math.Abs(float64(da.Max.X-dl.Max.X)) > 0.01 {
		t.Fatalf("frames not aligned: accuracy %v, loss %v", da.Rectangle, dl.Rectangle)
	}
}

// Every bar of the per-instance histogram ends inside the frame.
func TestInstanceHistogramBarsInFrame(t *testing.T) {
	for _, eps := range [][]float64{
		{0.5, 0.5, 0.5, 0.5, 1, 2},
		{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0.1},
		{0, 0.2, 0.4, 0.4, 0.41, 0.42, 0.9},
	} {
		p, h, err := instanceHistogram(eps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		tallest := 0.0
		for _, b := range h.Bins {
			tallest = math.Max(tallest, b.Weight)
		}
		if p.Plot.Y.Min != 0 || !(p.Plot.Y.Max > tallest) {
			t.Fatalf("%v: Y range [%g, %g], tallest bar %g", eps, p.Plot.Y.Min, p.Plot.Y.Max, tallest)
		}
	}
}
