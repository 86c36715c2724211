package trainer

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress selects how a run reports while it trains.
type Progress int

const (
	// ProgressBar draws a progress bar with step, test accuracy and ε (and
	// the batch loss when the run asked for private diagnostics).
	ProgressBar Progress = iota
	// ProgressQuiet prints nothing while training.
	ProgressQuiet
	// ProgressJSON prints every metrics record as one JSON line.
	ProgressJSON
	// ProgressLines prints one plain line per evaluation (for logs and
	// pipes, where a redrawn bar would be noise).
	ProgressLines
)

// reporter shows progress in the selected mode, on the curator's terminal
// (see outputs.go): the bar's elapsed time and ETA are private figures.
type reporter struct {
	mode    Progress
	w       io.Writer
	bar     *progressbar.ProgressBar
	lastAcc string
	// private: show training-data statistics (the batch loss); only in a
	// run that asked for private diagnostics.
	private bool
}

func newReporter(mode Progress, w io.Writer, total, start int, private bool) *reporter {
	r := &reporter{mode: mode, w: w, private: private}
	if mode == ProgressBar && w != nil {
		r.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("training"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(24),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionShowDescriptionAtLineEnd(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
		)
		if start > 0 {
			r.bar.Set(start)
		}
	}
	return r
}

func (r *reporter) step(rec *Record) {
	switch r.mode {
	case ProgressJSON:
		var v any = rec.released()
		if r.private {
			v = rec
		}
		if b, err := json.Marshal(v); err == nil {
			fmt.Fprintf(r.w, "%s\n", b)
		}
	case ProgressLines:
		if rec.TestAcc != nil && r.w != nil {
			loss := ""
			if r.private {
				loss = fmt.Sprintf("  loss %.4f (private)", rec.Loss)
			}
			fmt.Fprintf(r.w, "step %d%s  test acc %.4f  ε %.4f (%s)\n",
				rec.Step, loss, *rec.TestAcc, rec.EpsilonBest, rec.BestAccountant)
		}
	case ProgressBar:
		if r.bar == nil {
			return
		}
		if rec.TestAcc != nil {
			r.lastAcc = fmt.Sprintf(" acc %.3f", *rec.TestAcc)
		}
		loss := ""
		if r.private {
			loss = fmt.Sprintf("loss %.3f ", rec.Loss)
		}
		r.bar.Describe(fmt.Sprintf("%stest%s ε %.3f (%s)", loss, r.lastAcc, rec.EpsilonBest, rec.BestAccountant))
		r.bar.Set(rec.Step)
	}
}

func (r *reporter) finish() {
	if r.bar != nil {
		r.bar.Finish()
	}
}
