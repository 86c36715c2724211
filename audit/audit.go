package audit

import (
	"context"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/dptrain/dptrain/accountant"
	"github.com/dptrain/dptrain/audit/lowerbound"
	"github.com/dptrain/dptrain/internal/plotkit"
	"github.com/dptrain/dptrain/internal/sysmem"
	"github.com/dptrain/dptrain/trainer"
)

// Result is an audit: the lower bound beside the run's accounted bound.
type Result struct {
	lowerbound.Result
	Kind      string           `json:"kind"`
	Accounted accountant.Bound `json:"accounted"`
	// Contradicts is true when the lower bound exceeds the accounted ε:
	// the implementation does not honour its privacy claim.
	Contradicts bool    `json:"contradicts"`
	Seconds     float64 `json:"seconds"`
	// Correction says how the guess counts were chosen.
	Correction string `json:"correction"`
}

// GuessCounts are the guess counts an audit of m canaries tries: k "in"
// guesses for the k highest scores and k "out" guesses for the k lowest,
// for k = m/20, m/10, m/5, m/2.
func GuessCounts(m int) []int {
	var ks []int
	for _, f := range []int{20, 10, 5, 2} {
		if k := m / f; k >= 1 && (len(ks) == 0 || ks[len(ks)-1] != k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// BytesPerCanary is the memory an audit takes per canary: its bit, count
// and coordinate, the coordinate's noise, the released JSON written and
// read back, the scores and their order. Measured as the slope of the peak
// resident size between 2e5 and 1e6 canaries on a logistic regression
// (256 bytes); an audit whose canaries alone would not fit is refused
// before training.
const BytesPerCanary = 256

// Run trains cfg with m canaries of kind ("gradient") and audits the
// release at the given confidence. cfg.OutDir must be set: the audit reads
// the run's release/ (scores) and private/ (the inclusion bits).
func Run(ctx context.Context, cfg trainer.Config, opts trainer.Options, m int, kind trainer.AuditKind, confidence float64) (*Result, *trainer.Summary, error) {
	if cfg.OutDir == "" {
		return nil, nil, fmt.Errorf("audit: an output directory is needed")
	}
	if err := sysmem.Check(fmt.Sprintf("an audit with %d canaries", m), BytesPerCanary*float64(m)); err != nil {
		return nil, nil, err
	}
	cfg.AuditCanaries, cfg.AuditKind = m, kind
	sum, err := trainer.Run(ctx, cfg, opts)
	if err != nil {
		return nil, sum, err
	}
	ev, err := trainer.ReadCanaries(cfg.OutDir)
	if err != nil {
		return nil, sum, fmt.Errorf("audit: %w", err)
	}
	res, err := Evaluate(ev, cfg.Delta, confidence)
	if err != nil {
		return nil, sum, err
	}
	res.Accounted, res.Seconds = sum.Best, sum.Seconds
	res.Contradicts = res.EpsilonLower > sum.Best.Epsilon
	// The plot splits the scores by the canaries' inclusion bits, which are
	// private (private/canaries.json): it is the curator's.
	if err := plotScores(filepath.Join(cfg.OutDir, "private", "audit_scores.png"), ev, res); err != nil {
		return nil, sum, err
	}
	return res, sum, nil
}

// Evaluate turns canary evidence into the strongest one-run lower bound
// over every released score vector and guess count, dividing the
// significance among all of them (Bonferroni), so the bound stays valid
// although the best was chosen by looking at the scores.
func Evaluate(ev *trainer.CanaryEvidence, delta, confidence float64) (*Result, error) {
	names := make([]string, 0, len(ev.Scores))
	for n := range ev.Scores {
		names = append(names, n)
	}
	sort.Strings(names)
	ks := GuessCounts(len(ev.Included))
	tests := len(names) * len(ks)
	perVector := 1 - (1-confidence)/float64(len(names))
	best := &Result{Kind: ev.Kind}
	for _, n := range names {
		r, err := lowerbound.Scores(ev.Scores[n], ev.Included, ks, delta, perVector)
		if err != nil {
			return nil, err
		}
		if r.EpsilonLower >= best.EpsilonLower || best.Guesses == 0 {
			best.Result = r
		}
	}
	best.Confidence, best.Thresholds = confidence, tests
	best.Correction = fmt.Sprintf("best of %d guess counts × %d released score vectors; significance divided by %d (Bonferroni)", len(ks), len(names), tests)
	return best, nil
}

// scoresPanel overlays the score histograms of included and excluded
// canaries, the legend beside them and every bar inside the frame.
func scoresPanel(title string, in, out plotter.Values) (*plotkit.Panel, []*plotter.Histogram, error) {
	p := plotkit.New(title, "score", "canaries")
	var hs []*plotter.Histogram
	for _, v := range []struct {
		name string
		vals plotter.Values
		fill color.NRGBA
	}{{"included", in, color.NRGBA{R: 200, G: 50, B: 50, A: 140}}, {"excluded", out, color.NRGBA{R: 40, G: 90, B: 200, A: 140}}} {
		h, err := plotter.NewHist(v.vals, 30)
		if err != nil {
			return nil, nil, fmt.Errorf("audit plot: %w", err)
		}
		h.FillColor = v.fill
		h.LineStyle.Width = 0
		p.Plot.Add(h)
		p.Add(v.name, h)
		hs = append(hs, h)
	}
	plotkit.FitBars(p.Plot, hs...)
	return p, hs, nil
}

// plotScores draws the score distributions of included and excluded
// canaries (the auditor's own figure: the canaries are synthetic).
func plotScores(path string, ev *trainer.CanaryEvidence, res *Result) error {
	var name string
	for n := range ev.Scores {
		if name == "" || n < name {
			name = n
		}
	}
	sc := ev.Scores[name]
	var in, out plotter.Values
	for i, s := range sc {
		if ev.Included[i] {
			in = append(in, s)
		} else {
			out = append(out, s)
		}
	}
	if len(in) == 0 || len(out) == 0 {
		return nil
	}
	title := fmt.Sprintf("%s canary scores (%s): ε_lower = %.3f vs accounted %.3f", ev.Kind, name, res.EpsilonLower, res.Accounted.Epsilon)
	p, _, err := scoresPanel(title, in, out)
	if err != nil {
		return err
	}
	b, err := plotkit.Render(strings.TrimPrefix(filepath.Ext(path), "."), 8*vg.Inch, 4*vg.Inch, p)
	if err != nil {
		return fmt.Errorf("audit plot: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("audit plot: %w", err)
	}
	return os.Chmod(path, 0o600) // an earlier file keeps its mode otherwise
}
