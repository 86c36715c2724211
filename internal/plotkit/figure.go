package plotkit

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Panel is one plot and its legend. The legend is kept here rather than in
// plot.Plot's own, which gonum draws over the data area: Render draws it in
// a strip to the right of the frame.
type Panel struct {
	Plot   *plot.Plot
	Legend []Entry
}

// Entry is one legend line: its text and the thumbnails drawn before it.
type Entry struct {
	Name   string
	Thumbs []plot.Thumbnailer
}

// New returns a panel whose axes carry Ticks.
func New(title, xlabel, ylabel string) *Panel {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Tick.Marker = Ticks{}
	p.Y.Tick.Marker = Ticks{}
	return &Panel{Plot: p}
}

// Add adds a legend entry.
func (p *Panel) Add(name string, thumbs ...plot.Thumbnailer) {
	p.Legend = append(p.Legend, Entry{Name: name, Thumbs: thumbs})
}

// Headroom is the fraction of the tallest bar left free above it.
const Headroom = 0.06

// FitBars sets p's Y range to [0, top] with top the first labelled tick at
// least Headroom above the tallest bar of hs, so every bar ends inside the
// frame, below a labelled tick, and counts get whole-number ticks. It
// returns top.
func FitBars(p *plot.Plot, hs ...*plotter.Histogram) float64 {
	top := math.Max(Tallest(hs...)*(1+Headroom), 1)
	if s := Step(0, top, true); s > 0 {
		top = math.Ceil(top/s) * s
	}
	p.Y.Min, p.Y.Max = 0, top
	p.Y.Tick.Marker = Ticks{Integer: true}
	return top
}

// Tallest is the largest bin weight of hs (0 for none).
func Tallest(hs ...*plotter.Histogram) float64 {
	tallest := 0.0
	for _, h := range hs {
		for _, b := range h.Bins {
			tallest = math.Max(tallest, b.Weight)
		}
	}
	return tallest
}

// legendFont is smaller than the axis labels: the strip takes width from
// the data area.
const legendFont = 10

// legendGap separates the data frame from the legend strip.
var legendGap = vg.Points(10)

func legendOf(p *Panel) plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(l.TextStyle.Font, legendFont)
	l.Top, l.Left = true, true
	l.Padding = vg.Points(3)
	for _, e := range p.Legend {
		l.Add(e.Name, e.Thumbs...)
	}
	return l
}

// legendWidth is the widest legend among panels (0 when none has one).
func legendWidth(panels []*Panel) vg.Length {
	var w vg.Length
	for _, p := range panels {
		if len(p.Legend) == 0 {
			continue
		}
		l := legendOf(p)
		r := l.Rectangle(draw.Canvas{})
		w = max(w, r.Max.X-r.Min.X)
	}
	if w > 0 {
		w += legendGap + vg.Points(6)
	}
	return w
}

// Layout places panels stacked vertically on dc, with one legend strip on
// the right as wide as the widest legend, and returns each panel's canvas.
// plot.Align gives every panel the same data-area left and right edges, so
// panels over the same X range line up.
func Layout(dc draw.Canvas, panels ...*Panel) []draw.Canvas {
	area := dc
	area.Max.X -= legendWidth(panels)
	rows := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		rows[i] = []*plot.Plot{p.Plot}
	}
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(4), PadY: vg.Points(10)}
	cs := plot.Align(rows, tiles, area)
	out := make([]draw.Canvas, len(panels))
	for i := range cs {
		out[i] = cs[i][0]
	}
	return out
}

// Draw draws panels onto dc as Layout places them, each legend beside its
// panel's data area, top-aligned with it.
func Draw(dc draw.Canvas, panels ...*Panel) {
	for i, c := range Layout(dc, panels...) {
		p := panels[i]
		p.Plot.Draw(c)
		if len(p.Legend) == 0 {
			continue
		}
		da := p.Plot.DataCanvas(c)
		strip := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: da.Max.X + legendGap, Y: da.Min.Y},
			Max: vg.Point{X: dc.Max.X, Y: da.Max.Y},
		}}
		l := legendOf(p)
		l.Draw(strip)
	}
}

// Render draws panels stacked, each w × h, into a PNG or SVG by format
// ("png" or "svg").
func Render(format string, w, h vg.Length, panels ...*Panel) ([]byte, error) {
	if len(panels) == 0 {
		return nil, fmt.Errorf("plot: no panels")
	}
	H := h * vg.Length(len(panels))
	var buf bytes.Buffer
	switch format {
	case "png":
		c := vgimg.New(w, H)
		Draw(draw.New(c), panels...)
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
	case "svg":
		c := vgsvg.New(w, H)
		Draw(draw.New(c), panels...)
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
	default:
		return nil, fmt.Errorf("plot: unsupported image format %q", format)
	}
	return buf.Bytes(), nil
}

// Save renders panels to path, its format taken from the extension.
func Save(path string, w, h vg.Length, panels ...*Panel) error {
	ext := filepath.Ext(path)
	if ext == "" {
		return fmt.Errorf("plot %s: no extension (.png or .svg)", path)
	}
	b, err := Render(ext[1:], w, h, panels...)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}
