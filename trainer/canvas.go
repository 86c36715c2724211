package trainer

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/dptrain/dptrain/internal/plotkit"
)

// saveFigure writes panels stacked, each w × h, to path (.png or .svg),
// atomically: a reader of the run directory never sees half an image.
func saveFigure(path string, w, h vg.Length, panels ...*plotkit.Panel) error {
	b, err := plotkit.Render(strings.TrimPrefix(filepath.Ext(path), "."), w, h, panels...)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return writeFileAtomic(path, b)
}
