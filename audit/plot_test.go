package audit

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/dptrain/dptrain/internal/plotkit"
	"github.com/dptrain/dptrain/trainer"
)

// Every bar of the score histograms ends inside the frame, and the two
// populations are named in the legend.
func TestScoresPanelBarsInFrame(t *testing.T) {
	for _, tc := range []struct{ in, out plotter.Values }{
		{plotter.Values{1, 1, 1, 1, 1, 1, 1, 1, 2}, plotter.Values{0, 0.1, 0.2}},
		{plotter.Values{5, 6, 7}, plotter.Values{-1, -1, -1, -1, -1, 0}},
	} {
		p, hs, err := scoresPanel("scores", tc.in, tc.out)
		if err != nil {
			t.Fatal(err)
		}
		tallest := plotkit.Tallest(hs...)
		if p.Plot.Y.Min != 0 || !(p.Plot.Y.Max > tallest) {
			t.Fatalf("Y range [%g, %g], tallest bar %g", p.Plot.Y.Min, p.Plot.Y.Max, tallest)
		}
		if len(p.Legend) != 2 || p.Legend[0].Name != "included" || p.Legend[1].Name != "excluded" {
			t.Fatalf("legend %+v", p.Legend)
		}
	}
}

func TestPlotScoresWritesPNG(t *testing.T) {
	ev := &trainer.CanaryEvidence{Kind: "input", Scores: map[string][]float64{"loss": {1, 2, 3, 4, 0.5, 0.2}}, Included: []bool{true, true, true, false, false, false}}
	path := filepath.Join(t.TempDir(), "audit_scores.png")
	if err := plotScores(path, ev, &Result{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatal(err)
	}
}
