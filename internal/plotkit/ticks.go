// Package plotkit holds the presentation rules every dptrain figure shares:
// tick steps of 1, 2 or 5 × 10^k, histograms whose bars stay inside the
// frame, and legends drawn beside the data area instead of over it.
package plotkit

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// Labelled tick counts the ticker aims for: fewer leaves an axis hard to
// read off, more crowds the labels.
const (
	MinTicks = 4
	MaxTicks = 8
)

// Ticks is a plot.Ticker whose labelled ticks are the multiples of one step
// of 1, 2 or 5 × 10^k, the finest such step giving at most MaxTicks labels.
// On a range that starts on a tick (0 for a step or count axis) that step
// gives MinTicks..MaxTicks labels whenever the range allows MinTicks at
// all; on other ranges a 5 × 10^k step can leave three. Integer restricts
// the steps to whole numbers (training steps, counts).
type Ticks struct{ Integer bool }

var _ plot.Ticker = Ticks{}

// Ticks implements plot.Ticker.
func (t Ticks) Ticks(lo, hi float64) []plot.Tick {
	step := Step(lo, hi, t.Integer)
	if !(step > 0) || math.IsInf(step, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	_, k := stepMantissa(step)
	prec := max(0, -k)
	format := byte('f')
	if k > 5 || k < -5 {
		format, prec = 'g', 3
	}
	var ticks []plot.Tick
	first, last := math.Ceil(lo/step-1e-9), math.Floor(hi/step+1e-9)
	for i := first; i <= last; i++ {
		v := i * step
		if v == 0 {
			v = 0 // no "-0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, format, prec, 64)})
	}
	// Minor ticks split each step into fifths (1, 5) or quarters (2),
	// whole numbers only on an integer axis.
	m, _ := stepMantissa(step)
	parts := 5.0
	if m == 2 {
		parts = 4
	}
	minor := step / parts
	if t.Integer && minor < 1 {
		return ticks
	}
	for i := math.Ceil(lo/minor - 1e-9); i <= math.Floor(hi/minor+1e-9); i++ {
		if math.Mod(i, parts) != 0 {
			ticks = append(ticks, plot.Tick{Value: i * minor})
		}
	}
	return ticks
}

// Step returns the labelled-tick step Ticks uses on [lo, hi]: the smallest
// 1, 2 or 5 × 10^k (at least 1 when integer) leaving at most MaxTicks
// multiples in the range. It returns 0 for an empty or non-finite range.
func Step(lo, hi float64, integer bool) float64 {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0
	}
	k := math.Floor(math.Log10((hi - lo) / MaxTicks))
	if integer && k < 0 {
		k = 0
	}
	for ; ; k++ {
		for _, m := range []float64{1, 2, 5} {
			s := m * math.Pow(10, k)
			if TickCount(lo, hi, s) <= MaxTicks {
				return s
			}
		}
	}
}

// TickCount is the number of multiples of step in [lo, hi].
func TickCount(lo, hi, step float64) int {
	return int(math.Floor(hi/step+1e-9) - math.Ceil(lo/step-1e-9) + 1)
}

// stepMantissa splits a step into m × 10^k with m in {1, 2, 5}.
func stepMantissa(step float64) (m float64, k int) {
	k = int(math.Floor(math.Log10(step) + 1e-9))
	m = math.Round(step / math.Pow(10, float64(k)))
	return m, k
}

// StepAxis sets p's X axis to the training steps [0, last] with integer
// ticks; panels drawn over the same steps then share their tick marks.
func StepAxis(p *plot.Plot, last int) {
	p.X.Label.Text = "step"
	p.X.Min, p.X.Max = 0, float64(max(last, 1))
	p.X.Tick.Marker = Ticks{Integer: true}
}
