package repro

import (
	"encoding/csv"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WriteCSV writes header and rows to path, creating its directory.
func WriteCSV(path string, header []string, rows [][]string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(fh)
	if err := w.Write(header); err != nil {
		fh.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := w.WriteAll(rows); err != nil {
		fh.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return fh.Close()
}

// WriteFile writes text to path, creating its directory.
func WriteFile(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

// SavePlot saves p as base.png and base.svg at the given size in inches.
func SavePlot(p *plot.Plot, wInch, hInch float64, base string) error {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return err
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(vg.Length(wInch)*vg.Inch, vg.Length(hInch)*vg.Inch, base+ext); err != nil {
			return fmt.Errorf("plot %s%s: %w", base, ext, err)
		}
	}
	return nil
}

// Palette is a set of distinguishable line colours.
var Palette = []color.Color{
	color.NRGBA{R: 31, G: 119, B: 180, A: 255},
	color.NRGBA{R: 214, G: 39, B: 40, A: 255},
	color.NRGBA{R: 44, G: 160, B: 44, A: 255},
	color.NRGBA{R: 255, G: 127, B: 14, A: 255},
	color.NRGBA{R: 148, G: 103, B: 189, A: 255},
	color.NRGBA{R: 140, G: 86, B: 75, A: 255},
	color.NRGBA{R: 127, G: 127, B: 127, A: 255},
	color.NRGBA{R: 23, G: 190, B: 207, A: 255},
}

// AddLine adds a named line of points to p in colour i of Palette, dashed when
// dashed is set. Points with a non-finite or (on log axes) non-positive
// coordinate are dropped, so a curve that hits 0 or +Inf still draws.
func AddLine(p *plot.Plot, name string, xs, ys []float64, i int, dashed bool) error {
	_, logX := p.X.Scale.(plot.LogScale)
	_, logY := p.Y.Scale.(plot.LogScale)
	var pts plotter.XYs
	for k := range xs {
		x, y := xs[k], ys[k]
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) || (logX && x <= 0) || (logY && y <= 0) {
			continue
		}
		pts = append(pts, plotter.XY{X: x, Y: y})
	}
	if len(pts) == 0 {
		return nil
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("line %q: %w", name, err)
	}
	l.Color = Palette[i%len(Palette)]
	l.Width = vg.Points(1.5)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	p.Add(l)
	p.Legend.Add(name, l)
	return nil
}

// LogGrid returns the integers 1..dense and then about perDecade log-spaced
// integers per decade up to max (inclusive), sorted and without repeats.
func LogGrid(dense, max, perDecade int) []int {
	set := map[int]bool{}
	for t := 1; t <= dense && t <= max; t++ {
		set[t] = true
	}
	for e := 0.0; ; e += 1 / float64(perDecade) {
		t := int(math.Round(math.Pow(10, e)))
		if t > max {
			break
		}
		set[t] = true
	}
	set[max] = true
	out := make([]int, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Ints(out)
	return out
}

// G formats v with n significant digits for CSV files.
func G(v float64, n int) string { return strconv.FormatFloat(v, 'g', n, 64) }

// Diff formats ours − paper and the relative difference, for a table column.
func Diff(ours, paper float64) string {
	d := ours - paper
	if paper == 0 {
		return fmt.Sprintf("%+.3g", d)
	}
	return fmt.Sprintf("%+.3g (%+.2g%%)", d, 100*d/math.Abs(paper))
}
