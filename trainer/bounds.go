package trainer

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/preprocess"
)

// Advice on scaling tabular features, computed from the public test set
// only (its figures are published anyway) and from public constants: never
// from the training rows (docs/tabular.md#choosing---feature-bounds).
const (
	// clipWarnFraction: declared bounds that clip more than this fraction
	// of a column's test values are probably too narrow.
	clipWarnFraction = 0.05
	// rangeRatioWarn: test-set feature ranges this many times apart call
	// for --scale.
	rangeRatioWarn = 100.0
	// noiseWarnRatio: the standardisation's noise is said to dominate when
	// the noise std on a released mean (or variance) exceeds this fraction
	// of the test set's spread (or variance) of that column.
	noiseWarnRatio = 0.5
)

// columnName names feature j of a table for messages.
func columnName(d *datasets.Dataset, j int) string {
	if j < len(d.Columns) {
		return fmt.Sprintf("%q", d.Columns[j])
	}
	return fmt.Sprintf("feature %d", j+1)
}

// clipReport reports the fraction of the public test set's values each
// declared bound clips: one note, a warning naming the columns above
// clipWarnFraction.
func clipReport(test *datasets.Dataset, b preprocess.FeatureBounds) string {
	n, d := test.N(), test.Dim()
	clipped := make([]int, d)
	total := 0
	for i := range n {
		for j, v := range test.X[i*d : (i+1)*d] {
			if x := float64(v); x < b.Lo[j] || x > b.Hi[j] {
				clipped[j]++
				total++
			}
		}
	}
	if total == 0 {
		return fmt.Sprintf("the feature bounds clip none of the public test set's %d values", n*d)
	}
	var worst, some []string
	for j, c := range clipped {
		if c == 0 {
			continue
		}
		f := float64(c) / float64(n)
		s := fmt.Sprintf("%s %.1f%%", columnName(test, j), 100*f)
		if f > clipWarnFraction {
			worst = append(worst, s)
		} else {
			some = append(some, s)
		}
	}
	if worst == nil {
		return fmt.Sprintf("the feature bounds clip %.2f%% of the public test set's values (%s)", 100*float64(total)/float64(n*d), strings.Join(some, ", "))
	}
	return fmt.Sprintf("warning: the feature bounds clip more than %g%% of the public test set's values of %s: a feature clipped to its bound becomes a constant; widen those bounds from public knowledge of the features (docs/tabular.md)", 100*clipWarnFraction, strings.Join(worst, ", "))
}

// scaleAdvice suggests --scale when the public test set's feature ranges
// differ by orders of magnitude (a step size that suits one column does
// not suit the other, and the clipping norm is spent on the widest).
func scaleAdvice(test *datasets.Dataset) string {
	n, d := test.N(), test.Dim()
	if len(test.Shape) != 1 || d < 2 || n == 0 {
		return ""
	}
	lo, hi := make([]float64, d), make([]float64, d)
	for j := range d {
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
	}
	for i := range n {
		for j, v := range test.X[i*d : (i+1)*d] {
			if x := float64(v); !math.IsNaN(x) {
				lo[j], hi[j] = min(lo[j], x), max(hi[j], x)
			}
		}
	}
	narrow, wide := -1, -1
	for j := range d {
		r := hi[j] - lo[j]
		if !(r > 0) || math.IsInf(r, 0) {
			continue
		}
		if narrow < 0 || r < hi[narrow]-lo[narrow] {
			narrow = j
		}
		if wide < 0 || r > hi[wide]-lo[wide] {
			wide = j
		}
	}
	if narrow < 0 {
		return ""
	}
	ratio := (hi[wide] - lo[wide]) / (hi[narrow] - lo[narrow])
	if ratio < rangeRatioWarn {
		return ""
	}
	return fmt.Sprintf("warning: the public test set's feature ranges differ by a factor of about 10^%.0f (%s narrowest, %s widest): consider --scale minmax (free) or --scale standardize with --feature-bounds declared from public knowledge (docs/tabular.md)",
		math.Floor(math.Log10(ratio)), columnName(test, narrow), columnName(test, wide))
}

// noiseAdvice warns when the standardisation's noise dominates the
// statistics it releases: the noise std on a released mean of the
// normalised values, noiseStd/n (n public), against the public test set's
// spread of the same normalised values, column by column.
func noiseAdvice(test *datasets.Dataset, b preprocess.FeatureBounds, noiseStd float64, n int) string {
	nt, d := test.N(), test.Dim()
	if nt < 2 || n < 1 {
		return ""
	}
	noise := noiseStd / float64(n)
	var cols []string
	for j := range d {
		var s, ss float64
		for i := range nt {
			v := (min(max(float64(test.X[i*d+j]), b.Lo[j]), b.Hi[j])-b.Lo[j])/(b.Hi[j]-b.Lo[j]) - 0.5
			s += v
			ss += v * v
		}
		m := s / float64(nt)
		variance := max(ss/float64(nt)-m*m, 0)
		if noise > noiseWarnRatio*math.Sqrt(variance) || noise > noiseWarnRatio*variance {
			cols = append(cols, columnName(test, j))
		}
	}
	if cols == nil {
		return ""
	}
	slices.Sort(cols)
	more := ""
	if len(cols) > 5 {
		more = fmt.Sprintf(" and %d more", len(cols)-5)
		cols = cols[:5]
	}
	return fmt.Sprintf("warning: the standardisation's noise dominates its statistics: with %d training rows the noise on each released mean is %.2g of the bounds' range, more than half the public test set's spread of %s%s; the released means and deviations may be far from the data: use --scale minmax (free), more rows, or a larger --scale-epsilon-fraction (docs/tabular.md)",
		n, noise, strings.Join(cols, ", "), more)
}

// logData sends Options.Log the run's data line and the data's notes (the
// scaling advice above among them) before training starts, so a library
// caller sees them as the command line's user does.
func (s *state) logData() {
	s.logf("data %s (%s): %d train, %d test", s.cfg.Dataset, s.data.source, s.data.train.N(), s.data.test.N())
	for _, n := range s.data.notes {
		s.logf("note %s", n)
	}
}
