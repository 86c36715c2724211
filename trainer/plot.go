package trainer

import (
	"fmt"
	"image/color"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// WritePlots draws the released curves from records into dir:
// test.png/svg (the released model's test accuracy and loss against step)
// and epsilon.png/svg (ε against step for every accountant). Both are
// functions of the released model on public data and of the account: the
// training loss is not drawn here (see the private diagnostics plot).
func WritePlots(dir string, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	var acc, tloss plotter.XYs
	eps := map[string]plotter.XYs{}
	for _, r := range recs {
		if r.TestAcc != nil {
			acc = append(acc, plotter.XY{X: float64(r.Step), Y: *r.TestAcc})
		}
		if r.TestLoss != nil {
			tloss = append(tloss, plotter.XY{X: float64(r.Step), Y: *r.TestLoss})
		}
		for name, e := range r.Epsilon {
			eps[name] = append(eps[name], plotter.XY{X: float64(r.Step), Y: e})
		}
	}
	last := float64(recs[len(recs)-1].Step)

	// Test curves: two stacked panels over the same step range.
	pa := plot.New()
	pa.Title.Text = "test accuracy (released model)"
	pa.Y.Label.Text = "accuracy"
	pa.Y.Min, pa.Y.Max = 0, 1
	pl := plot.New()
	pl.Title.Text = "test loss (released model)"
	pl.X.Label.Text = "step"
	pl.Y.Label.Text = "loss"
	for _, p := range []*plot.Plot{pa, pl} {
		p.X.Min, p.X.Max = 0, last
	}
	if len(acc) > 0 {
		if err := addLine(pa, "test", acc, 0); err != nil {
			return err
		}
		pa.Legend.Top = false // bottom right: the curve rises towards the top
	}
	if len(tloss) > 0 {
		if err := addLine(pl, "test", tloss, 0); err != nil {
			return err
		}
		pl.Legend.Top = true // top right: the loss falls away from it
	}
	for _, ext := range []string{"png", "svg"} {
		if err := saveStack(filepath.Join(dir, "test."+ext), pa, pl); err != nil {
			return err
		}
	}

	pe := plot.New()
	pe.Title.Text = fmt.Sprintf("privacy spent (δ fixed), %d steps", recs[len(recs)-1].Step)
	pe.X.Label.Text = "step"
	pe.Y.Label.Text = "ε"
	pe.X.Min, pe.X.Max = 0, last
	pe.Legend.Top, pe.Legend.Left = true, true
	names := make([]string, 0, len(eps))
	for n := range eps {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		if err := addLine(pe, n, eps[n], i); err != nil {
			return err
		}
	}
	for _, ext := range []string{"png", "svg"} {
		if err := pe.Save(7*vg.Inch, 4*vg.Inch, filepath.Join(dir, "epsilon."+ext)); err != nil {
			return fmt.Errorf("plot %s: %w", dir, err)
		}
	}
	return nil
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
	last := float64(recs[len(recs)-1].Step)
	mk := func(title, y string) *plot.Plot {
		p := plot.New()
		p.Title.Text = title
		p.Y.Label.Text = y
		p.X.Min, p.X.Max = 0, last
		return p
	}
	pl := mk("PRIVATE: training loss (mean over the step's batch)", "loss")
	pn := mk("PRIVATE: per-example gradient norm before clipping", "norm")
	pc := mk("PRIVATE: fraction of the batch clipped, and training accuracy", "fraction")
	pc.X.Label.Text = "step"
	pc.Y.Min, pc.Y.Max = 0, 1
	for _, l := range []struct {
		p    *plot.Plot
		name string
		xy   plotter.XYs
		i    int
	}{{pl, "loss", loss, 0}, {pn, "mean", normMean, 0}, {pn, "max", normMax, 1}, {pc, "clipped", clipped, 0}, {pc, "train acc (subset)", trainAcc, 1}} {
		if len(l.xy) == 0 {
			continue
		}
		if err := addLine(l.p, l.name, l.xy, l.i); err != nil {
			return err
		}
	}
	return saveStack(filepath.Join(dir, "diagnostics.png"), pl, pn, pc)
}

func addLine(p *plot.Plot, name string, xy plotter.XYs, i int) error {
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
		p.Add(plotter.NewGrid())
	}
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

// saveStack writes plots stacked vertically into one image.
func saveStack(path string, plots ...*plot.Plot) error {
	const w, h = 7 * vg.Inch, 3 * vg.Inch
	rows := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		rows[i] = []*plot.Plot{p}
	}
	img, err := newCanvas(path, w, h*vg.Length(len(plots)))
	if err != nil {
		return err
	}
	tiles := plotTiles(len(plots))
	canvases := plot.Align(rows, tiles, img.dc)
	for i, p := range plots {
		p.Draw(canvases[i][0])
	}
	return img.save()
}
