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

// WritePlots draws the run's curves from its records into dir:
// training.png/svg (loss, and test and training accuracy, against step) and
// epsilon.png/svg (ε against step for every accountant).
func WritePlots(dir string, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	loss := make(plotter.XYs, 0, len(recs))
	var acc, trainAcc plotter.XYs
	eps := map[string]plotter.XYs{}
	for _, r := range recs {
		loss = append(loss, plotter.XY{X: float64(r.Step), Y: r.Loss})
		if r.TestAcc != nil {
			acc = append(acc, plotter.XY{X: float64(r.Step), Y: *r.TestAcc})
		}
		if r.TrainAcc != nil {
			trainAcc = append(trainAcc, plotter.XY{X: float64(r.Step), Y: *r.TrainAcc})
		}
		for name, e := range r.Epsilon {
			eps[name] = append(eps[name], plotter.XY{X: float64(r.Step), Y: e})
		}
	}

	// Training curves: two stacked panels sharing the step axis.
	pl := plot.New()
	pl.Title.Text = "training loss (mean over the step's batch)"
	pl.X.Label.Text = "step"
	pl.Y.Label.Text = "loss"
	if err := addLine(pl, "loss", loss, 0); err != nil {
		return err
	}
	pa := plot.New()
	pa.Title.Text = "accuracy"
	pa.X.Label.Text = "step"
	pa.Y.Label.Text = "accuracy"
	pa.Y.Min, pa.Y.Max = 0, 1
	if len(acc) > 0 {
		if err := addLine(pa, "test", acc, 0); err != nil {
			return err
		}
	}
	if len(trainAcc) > 0 {
		if err := addLine(pa, "train (subset)", trainAcc, 1); err != nil {
			return err
		}
	}
	pa.Legend.Top = false // bottom right: the curves rise towards the top
	for _, ext := range []string{"png", "svg"} {
		if err := saveStack(filepath.Join(dir, "training."+ext), pl, pa); err != nil {
			return err
		}
	}

	pe := plot.New()
	pe.Title.Text = fmt.Sprintf("privacy spent (δ fixed), %d steps", recs[len(recs)-1].Step)
	pe.X.Label.Text = "step"
	pe.Y.Label.Text = "ε"
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
