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
	// ProgressBar draws a progress bar with step, loss, accuracy and ε.
	ProgressBar Progress = iota
	// ProgressQuiet prints nothing while training.
	ProgressQuiet
	// ProgressJSON prints every metrics record as one JSON line.
	ProgressJSON
	// ProgressLines prints one plain line per evaluation (for logs and
	// pipes, where a redrawn bar would be noise).
	ProgressLines
)

// reporter shows progress in the selected mode.
type reporter struct {
	mode    Progress
	w       io.Writer
	bar     *progressbar.ProgressBar
	lastAcc string
}

func newReporter(mode Progress, w io.Writer, total, start int) *reporter {
	r := &reporter{mode: mode, w: w}
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
		if b, err := json.Marshal(rec); err == nil {
			fmt.Fprintf(r.w, "%s\n", b)
		}
	case ProgressLines:
		if rec.TestAcc != nil && r.w != nil {
			fmt.Fprintf(r.w, "step %d  loss %.4f  test acc %.4f  ε %.4f (%s)  %.0fs\n",
				rec.Step, rec.Loss, *rec.TestAcc, rec.EpsilonBest, rec.BestAccountant, rec.Elapsed)
		}
	case ProgressBar:
		if r.bar == nil {
			return
		}
		if rec.TestAcc != nil {
			r.lastAcc = fmt.Sprintf(" acc %.3f", *rec.TestAcc)
		}
		r.bar.Describe(fmt.Sprintf("loss %.3f%s ε %.3f (%s)", rec.Loss, r.lastAcc, rec.EpsilonBest, rec.BestAccountant))
		r.bar.Set(rec.Step)
	}
}

func (r *reporter) finish() {
	if r.bar != nil {
		r.bar.Finish()
	}
}
