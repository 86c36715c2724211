package trainer

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/dptrain/dptrain/internal/plotkit"
)

// PlotOptions are the settings the released plots state beside the
// records: both come from the configuration, never from the data.
type PlotOptions struct {
	// Delta is the δ at which every recorded ε was computed; 0 if unknown.
	Delta float64
	// TargetEpsilon, when > 0, is drawn on the ε plot as a dashed line.
	TargetEpsilon float64
}

// WritePlots draws the released curves from records into dir:
// test.png/svg (the released model's test accuracy and loss against step)
// and epsilon.png/svg (ε against step for every accountant). Both are
// functions of the released model on public data, of the account and of
// opt: the training loss is not drawn here (see the private diagnostics
// plot).
func WritePlots(dir string, recs []Record, opt PlotOptions) error {
	if len(recs) == 0 {
		return nil
	}
	pa, pl, err := testPanels(recs)
	if err != nil {
		return err
	}
	pe, err := epsilonPanel(recs, opt)
	if err != nil {
		return err
	}
	for _, ext := range []string{"png", "svg"} {
		if err := saveFigure(filepath.Join(dir, "test."+ext), 7*vg.Inch, 3*vg.Inch, pa, pl); err != nil {
			return err
		}
		if err := saveFigure(filepath.Join(dir, "epsilon."+ext), 8*vg.Inch, 4*vg.Inch, pe); err != nil {
			return err
		}
	}
	return nil
}

// testPanels are the released model's test accuracy and loss over the same
// step axis; saveFigure aligns their frames so a step reads off both.
func testPanels(recs []Record) (acc, loss *plotkit.Panel, err error) {
	var axy, lxy plotter.XYs
	for _, r := range recs {
		if r.TestAcc != nil {
			axy = append(axy, plotter.XY{X: float64(r.Step), Y: *r.TestAcc})
		}
		if r.TestLoss != nil {
			lxy = append(lxy, plotter.XY{X: float64(r.Step), Y: *r.TestLoss})
		}
	}
	last := recs[len(recs)-1].Step
	// One curve per panel, named by the title: no legend to hide it.
	acc = plotkit.New("test accuracy (released model)", "", "accuracy")
	loss = plotkit.New("test loss (released model)", "", "loss")
	plotkit.StepAxis(acc.Plot, last)
	plotkit.StepAxis(loss.Plot, last)
	acc.Plot.X.Label.Text = "" // the loss panel below labels the shared axis
	if err := addLine(acc, "", axy, 0); err != nil {
		return nil, nil, err
	}
	if err := addLine(loss, "", lxy, 0); err != nil {
		return nil, nil, err
	}
	// After the lines: Add widens the range to the data.
	acc.Plot.Y.Min, acc.Plot.Y.Max = 0, 1
	loss.Plot.Y.Min = 0
	return acc, loss, nil
}

// deltaLabel names the ε of the records: ε(δ = 1e-05).
func deltaLabel(delta float64) string {
	if delta > 0 {
		return fmt.Sprintf("ε(δ = %g)", delta)
	}
	return "ε (δ fixed)"
}

// epsilonPanel draws ε against step for every accountant and, when a target
// is set, the target as a dashed horizontal line.
func epsilonPanel(recs []Record, opt PlotOptions) (*plotkit.Panel, error) {
	eps := map[string]plotter.XYs{}
	top := 0.0
	for _, r := range recs {
		for name, e := range r.Epsilon {
			if math.IsNaN(e) || math.IsInf(e, 0) {
				continue // an accountant that has no finite bound yet
			}
			eps[name] = append(eps[name], plotter.XY{X: float64(r.Step), Y: e})
			top = math.Max(top, e)
		}
	}
	last := recs[len(recs)-1].Step
	p := plotkit.New(fmt.Sprintf("privacy spent, %s, %d steps", deltaLabel(opt.Delta), last), "", deltaLabel(opt.Delta))
	plotkit.StepAxis(p.Plot, last)
	names := make([]string, 0, len(eps))
	for n := range eps {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if err := addLine(p, n, eps[n], i); err != nil {
			return nil, err
		}
	}
	if t := opt.TargetEpsilon; t > 0 && !math.IsInf(t, 0) {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: t}, {X: p.Plot.X.Max, Y: t}})
		if err != nil {
			return nil, fmt.Errorf("plot target ε: %w", err)
		}
		l.Color, l.Width = color.NRGBA{R: 200, A: 255}, vg.Points(1.2)
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Plot.Add(l)
		p.Add(fmt.Sprintf("target ε = %g", t), l)
		top = math.Max(top, t)
	}
	// ε starts at 0; the headroom keeps the top curve or the target line
	// off the frame.
	p.Plot.Y.Min, p.Plot.Y.Max = 0, math.Max(top*1.05, 1e-3)
	return p, nil
}

// writeDiagnosticsPlot draws the private training-data statistics into dir
// (diagnostics.png): batch loss, accuracy on training records, gradient
// norms before clipping and the clipped fraction. Curator only.
func writeDiagnosticsPlot(dir string, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	var loss, trainAcc, normMean, normMax, clipped plotter.XYs
	for _, r := range recs {
		x := float64(r.Step)
		loss = append(loss, plotter.XY{X: x, Y: r.Loss})
		normMean = append(normMean, plotter.XY{X: x, Y: r.GradNormMean})
		normMax = append(normMax, plotter.XY{X: x, Y: r.GradNormMax})
		clipped = append(clipped, plotter.XY{X: x, Y: r.ClippedFrac})
		if r.TrainAcc != nil {
			trainAcc = append(trainAcc, plotter.XY{X: x, Y: *r.TrainAcc})
		}
	}
	last := recs[len(recs)-1].Step
	mk := func(title, y string) *plotkit.Panel {
		p := plotkit.New(title, "", y)
		plotkit.StepAxis(p.Plot, last)
		p.Plot.X.Label.Text = ""
		return p
	}
	pl := mk("PRIVATE: training loss (mean over the step's batch)", "loss")
	pn := mk("PRIVATE: per-example gradient norm before clipping", "norm")
	pc := mk("PRIVATE: fraction of the batch clipped, and training accuracy", "fraction")
	pc.Plot.X.Label.Text = "step"
	for _, l := range []struct {
		p    *plotkit.Panel
		name string
		xy   plotter.XYs
		i    int
	}{{pl, "", loss, 0}, {pn, "mean", normMean, 0}, {pn, "max", normMax, 1}, {pc, "clipped", clipped, 0}, {pc, "train acc (subset)", trainAcc, 1}} {
		if err := addLine(l.p, l.name, l.xy, l.i); err != nil {
			return err
		}
	}
	pc.Plot.Y.Min, pc.Plot.Y.Max = 0, 1 // after the lines: Add widens the range
	return saveFigure(filepath.Join(dir, "diagnostics.png"), 8*vg.Inch, 3*vg.Inch, pl, pn, pc)
}

// addLine draws xy on p in the i-th palette colour, with a legend entry
// unless name is empty; an empty series draws nothing.
func addLine(p *plotkit.Panel, name string, xy plotter.XYs, i int) error {
	if len(xy) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xy)
	if err != nil {
		return fmt.Errorf("plot %s: %w", name, err)
	}
	l.Color = plotutil.Color(i)
	l.Width = vg.Points(1.5)
	if l.Color == nil {
		l.Color = color.Black
	}
	if i == 0 {
		p.Plot.Add(plotter.NewGrid())
	}
	p.Plot.Add(l)
	if name != "" {
		p.Add(name, l)
	}
	return nil
}
