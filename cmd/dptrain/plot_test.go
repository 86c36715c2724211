package main

import (
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/dptrain/dptrain/internal/plotkit"
	"github.com/dptrain/dptrain/objpert"
)

// pdp_hist.png: every bar and the DP ε line inside the frame, and the
// legend beside the histograms naming each series and the ε line.
func TestReportHistPanel(t *testing.T) {
	a := &objpert.Analysis{Config: objpert.AnalysisConfig{Loss: objpert.Logistic{}}, Release: objpert.ApproxDP{Epsilon: 1.5}}
	for i := range 200 {
		e := 0.2 + float64(i%7)*0.1
		if i%3 == 0 {
			e = 0.25 // one tall bar
		}
		r := objpert.RecordResult{Index: i, Indep: 2 * e}
		r.Exact.Epsilon = e
		a.Records = append(a.Records, r)
	}
	p, hs, err := reportHistPanel(a)
	if err != nil {
		t.Fatal(err)
	}
	tallest := plotkit.Tallest(hs...)
	if len(hs) != 2 || p.Plot.Y.Min != 0 || !(p.Plot.Y.Max > tallest) {
		t.Fatalf("%d histograms, Y range [%g, %g], tallest bar %g", len(hs), p.Plot.Y.Min, p.Plot.Y.Max, tallest)
	}
	var names []string
	for _, e := range p.Legend {
		names = append(names, e.Name)
	}
	if len(names) != 3 || names[2] != "DP epsilon = 1.5" {
		t.Fatalf("legend %q", names)
	}
	l := p.Legend[2].Thumbs[0].(*plotter.Line)
	if l.XYs[0].X != 1.5 || l.XYs[1].Y != p.Plot.Y.Max {
		t.Fatalf("ε line %v, want x = 1.5 up to the frame's top %g", l.XYs, p.Plot.Y.Max)
	}
}
