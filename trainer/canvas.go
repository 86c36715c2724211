package trainer

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// canvas is a multi-plot drawing surface written atomically to a PNG or SVG.
type canvas struct {
	path string
	dc   draw.Canvas
	to   io.WriterTo
}

func newCanvas(path string, w, h vg.Length) (*canvas, error) {
	switch filepath.Ext(path) {
	case ".png":
		c := vgimg.New(w, h)
		return &canvas{path: path, dc: draw.New(c), to: vgimg.PngCanvas{Canvas: c}}, nil
	case ".svg":
		c := vgsvg.New(w, h)
		return &canvas{path: path, dc: draw.New(c), to: c}, nil
	}
	return nil, fmt.Errorf("plot %s: unsupported image format", path)
}

func (c *canvas) save() error {
	var buf bytes.Buffer
	if _, err := c.to.WriteTo(&buf); err != nil {
		return fmt.Errorf("plot %s: %w", c.path, err)
	}
	return writeFileAtomic(c.path, buf.Bytes())
}

func plotTiles(rows int) draw.Tiles {
	return draw.Tiles{Rows: rows, Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4),
		PadLeft: vg.Points(4), PadRight: vg.Points(4), PadY: vg.Points(8)}
}
