package main

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dptrain/dptrain/internal/plotkit"
)

// maxConfusionClasses bounds the classes eval draws: past it a cell is a
// few pixels and the names overlap; --json has the whole matrix.
const maxConfusionClasses = 100

// confusionGrid is a confusion matrix as a plotter.GridXYZ: column c is
// the predicted class, row r the true class k-1-r (so class 0 is the top
// row, as in the printed matrix), Z the fraction of the true class's
// examples predicted as c. Rows rather than raw counts set the colour so a
// small class's errors show as plainly as a large one's.
type confusionGrid struct {
	conf [][]int
	rows []int // examples per true class
}

func newConfusionGrid(conf [][]int) confusionGrid {
	g := confusionGrid{conf: conf, rows: make([]int, len(conf))}
	for i, row := range conf {
		for _, c := range row {
			g.rows[i] += c
		}
	}
	return g
}

func (g confusionGrid) Dims() (c, r int) { return len(g.conf), len(g.conf) }
func (g confusionGrid) X(c int) float64  { return float64(c) }
func (g confusionGrid) Y(r int) float64  { return float64(r) }
func (g confusionGrid) Z(c, r int) float64 {
	return g.frac(len(g.conf)-1-r, c)
}

// frac is the fraction of true class t predicted as p; 0 for a class with
// no examples (nothing to colour, and no NaN for the palette).
func (g confusionGrid) frac(t, p int) float64 {
	if g.rows[t] == 0 {
		return 0
	}
	return float64(g.conf[t][p]) / float64(g.rows[t])
}

// confusionColors runs from near-white (no examples) to dark blue (every
// example of the row): luminance is monotone, so the scale reads in grey too.
func confusionColors() (palette.ColorMap, error) {
	cm, err := moreland.NewLuminance([]color.Color{
		color.NRGBA{R: 8, G: 48, B: 107, A: 255},
		color.NRGBA{R: 66, G: 146, B: 198, A: 255},
		color.NRGBA{R: 247, G: 251, B: 255, A: 255},
	})
	if err != nil {
		return nil, fmt.Errorf("confusion colours: %w", err)
	}
	cm = palette.Reverse(cm)
	cm.SetMin(0)
	cm.SetMax(1)
	return cm, nil
}

// confusionFigure is the heat map and its colour scale.
type confusionFigure struct {
	heat, scale *plot.Plot
	cells       *plotter.Labels // nil when the cells are too small for text
	w, h        vg.Length
}

// className is names[i] when the data names its classes, else i.
func className(names []string, i int) string {
	if i < len(names) && names[i] != "" {
		return names[i]
	}
	return strconv.Itoa(i)
}

// newConfusionFigure lays out the heat map of conf (rows: true class,
// columns: predicted) with class names on both axes, each cell's count and
// row percentage written in it when there is room, and a colour scale.
func newConfusionFigure(conf [][]int, names []string, title string) (*confusionFigure, error) {
	k := len(conf)
	if k == 0 {
		return nil, fmt.Errorf("confusion plot: no classes")
	}
	if k > maxConfusionClasses {
		return nil, fmt.Errorf("confusion plot: %d classes, more than the %d a readable image holds; use --json for the matrix", k, maxConfusionClasses)
	}
	for _, row := range conf {
		if len(row) != k {
			return nil, fmt.Errorf("confusion plot: a %d-class matrix with a row of %d", k, len(row))
		}
	}
	cm, err := confusionColors()
	if err != nil {
		return nil, err
	}
	g := newConfusionGrid(conf)
	h := plotter.NewHeatMap(g, cm.Palette(256))
	h.Min, h.Max = 0, 1

	// Cells from 0.6 in (ten classes fill 6 in) down to 0.1 in.
	cell := max(min(vg.Inch*6/vg.Length(k), 0.6*vg.Inch), 0.1*vg.Inch)
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "predicted class"
	p.Y.Label.Text = "true class"
	p.X.Padding, p.Y.Padding = 0, 0
	p.Add(h)
	p.X.Min, p.X.Max = -0.5, float64(k)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(k)-0.5
	var xt, yt []plot.Tick
	long := false
	for i := range k {
		n := className(names, i)
		long = long || len([]rune(n)) > 3
		xt = append(xt, plot.Tick{Value: float64(i), Label: n})
		yt = append(yt, plot.Tick{Value: float64(k - 1 - i), Label: n})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(xt), plot.ConstantTicks(yt)
	if long {
		// Slanted, so long names under narrow columns do not run together.
		p.X.Tick.Label.Rotation = math.Pi / 4
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop
	}
	tickFont := min(10, max(5, cell.Points()/2.5))
	p.X.Tick.Label.Font.Size = vg.Points(tickFont)
	p.Y.Tick.Label.Font.Size = vg.Points(tickFont)

	fig := &confusionFigure{heat: p}
	if cell >= 0.3*vg.Inch {
		var xys plotter.XYs
		var texts []string
		for t := range k {
			for q := range k {
				xys = append(xys, plotter.XY{X: float64(q), Y: float64(k - 1 - t)})
				texts = append(texts, fmt.Sprintf("%d\n%.0f%%", conf[t][q], 100*g.frac(t, q)))
			}
		}
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
		if err != nil {
			return nil, fmt.Errorf("confusion plot: %w", err)
		}
		size := vg.Points(min(10, cell.Points()/3.6))
		for i := range l.TextStyle {
			s := &l.TextStyle[i]
			s.Font.Size = size
			s.XAlign, s.YAlign = draw.XCenter, draw.YCenter
			s.Color = color.Black
			if g.frac(i/k, i%k) > 0.5 { // dark cell
				s.Color = color.White
			}
		}
		p.Add(l)
		fig.cells = l
	}

	sc := plot.New()
	sc.HideX()
	sc.X.Padding, sc.Y.Padding = 0, 0
	sc.Y.Label.Text = "fraction of the true class"
	sc.Y.Tick.Marker = plotkit.Ticks{}
	sc.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	fig.scale = sc

	names0 := 0.0
	for i := range k {
		names0 = math.Max(names0, float64(len([]rune(className(names, i)))))
	}
	label := vg.Points(names0 * tickFont * 0.6) // room for the names beside the axes
	fig.w = vg.Length(k)*cell + label + 1.3*vg.Inch + confusionStrip
	// A long title widens the image rather than running off its edges.
	tw := p.Title.TextStyle.Rectangle(title)
	fig.w = max(fig.w, tw.Max.X-tw.Min.X+confusionStrip+vg.Points(24))
	fig.h = vg.Length(k)*cell + label + 1.2*vg.Inch
	return fig, nil
}

// confusionStrip is the width kept right of the heat map for the colour
// scale: its tick labels, its axis label and the bar.
const confusionStrip = 1.4 * vg.Inch

// draw puts the heat map on the left of dc and the colour scale in a strip
// on the right, the bar spanning the heat map's rows.
func (f *confusionFigure) draw(dc draw.Canvas) {
	dc = draw.Crop(dc, vg.Points(6), -vg.Points(6), vg.Points(6), -vg.Points(6))
	left := dc
	left.Max.X -= confusionStrip
	f.heat.Draw(left)
	da := f.heat.DataCanvas(left)
	strip := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: left.Max.X + vg.Points(14), Y: da.Min.Y},
		Max: vg.Point{X: dc.Max.X, Y: da.Max.Y},
	}}
	// The bar itself is 18 pt wide, after the scale's axis.
	axis := f.scale.DataCanvas(strip).Min.X - strip.Min.X
	strip.Max.X = min(strip.Max.X, strip.Min.X+axis+vg.Points(18))
	f.scale.Draw(strip)
}

// writeConfusionPlot draws the confusion matrix to path: PNG, or SVG for a
// .svg name.
func writeConfusionPlot(path string, conf [][]int, names []string, title string) error {
	f, err := newConfusionFigure(conf, names, title)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		c := vgimg.NewWith(vgimg.UseWH(f.w, f.h), vgimg.UseDPI(120))
		f.draw(draw.New(c))
		_, err = vgimg.PngCanvas{Canvas: c}.WriteTo(&buf)
	case ".svg":
		c := vgsvg.New(f.w, f.h)
		f.draw(draw.New(c))
		_, err = c.WriteTo(&buf)
	default:
		return fmt.Errorf("confusion plot %s: the name must end in .png or .svg", path)
	}
	if err != nil {
		return fmt.Errorf("confusion plot %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("confusion plot: %w", err)
	}
	return nil
}
