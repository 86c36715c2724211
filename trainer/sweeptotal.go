package trainer

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/dptrain/dptrain/accountant"
)

// SweepShare is what one run of a sweep states about the sweep it belongs
// to (release/summary.json's "sweep", and its claim): a run picked from a
// sweep's table was chosen by every run's results, all trained on the same
// data, so what covers it is the sweep's total, not the run's own ε.
type SweepShare struct {
	Run  int `json:"run"`  // this run's number in the sweep's table (1-based)
	Runs int `json:"runs"` // runs the sweep trained
	// Composed are the runs (1-based) whose every step the total composes:
	// those under this run's neighbouring relation.
	Composed []int `json:"composed_runs"`
	// Total is the sweep's total: ε at Delta by the tightest accountant
	// that composes every step of the Composed runs.
	Total accountant.Bound `json:"total"`
	Delta float64          `json:"delta"`
	// Own is this run's own ε (its summary's best bound): it does not
	// cover a run picked from the table.
	Own float64 `json:"own_epsilon"`
	Why string  `json:"why"`
}

// sweepWhy is SweepShare.Why.
const sweepWhy = "every run of the sweep trained on the same training data, and a run picked from the sweep's table (by its test accuracy or any other result) was chosen by looking at all of them: what is published is a function of every run, so it is covered by the composition of every step of every run (the total), not by this run's own ε"

// StampSweepTotal records in the release of sum, run number run (1-based)
// of a sweep of runs runs written to sum's output directory, the sweep's
// total that covers it, and why: sum's claim, release/summary.json,
// private/summary.json and release/report.html are rewritten with it.
// total must compose the run (it is ComposeRuns' total for its relation,
// whose Runs are 0-based). A run that wrote no output directory, or failed
// (its partial account: nothing was released), is left alone.
func StampSweepTotal(sum *Summary, run, runs int, total RunsTotal, delta float64) error {
	if sum == nil || sum.cfg.OutDir == "" || sum.partial {
		return nil
	}
	if !slices.Contains(total.Runs, run-1) {
		return fmt.Errorf("sweep run %d: the total composes runs %v, not this one", run, total.Runs)
	}
	share := &SweepShare{Run: run, Runs: runs, Total: total.Bound, Delta: delta, Own: sum.Best.Epsilon, Why: sweepWhy}
	for _, i := range total.Runs {
		share.Composed = append(share.Composed, i+1)
	}
	sum.Sweep = share
	s := &state{cfg: sum.cfg, out: &outputs{root: sum.cfg.OutDir}}
	sum.Claim = s.claim(sum)
	// The release is replaced whole, like a run's (rundir_publish.go).
	unlock, err := lockOutDir(sum.cfg.OutDir)
	if err != nil {
		return fmt.Errorf("sweep run %d: %w", run, err)
	}
	defer unlock()
	if err := s.out.restage(); err != nil {
		return fmt.Errorf("sweep run %d: %w", run, err)
	}
	if err := s.writeSummaries(sum); err != nil {
		os.RemoveAll(s.out.staging(""))
		return fmt.Errorf("sweep run %d: %w", run, err)
	}
	if err := s.writeReport(sum); err != nil {
		os.RemoveAll(s.out.staging(""))
		return fmt.Errorf("sweep run %d: %w", run, err)
	}
	if err := s.out.publish(); err != nil {
		return fmt.Errorf("sweep run %d: %w", run, err)
	}
	return nil
}

// sweepClaim is the claim of a run of a sweep: the sweep's total covers
// its release, with the run's own ε named as what it is not.
func sweepClaim(w *strings.Builder, sw *SweepShare) {
	nums := make([]string, len(sw.Composed))
	for k, i := range sw.Composed {
		nums[k] = fmt.Sprint(i)
	}
	fmt.Fprintf(w, "(ε = %.4g, δ = %g)-DP under %s neighbouring %s (%s) for the model and everything in release/ as a run picked from a sweep: the total of every step of the sweep's runs %s, all trained on the same data (this is run %d of %d; its own ε = %.4g covers it only if it was chosen without looking at any run's results); unit of privacy: one training record",
		sw.Total.Epsilon, sw.Delta, sw.Total.Relation, NPublic, sw.Total.Accountant, strings.Join(nums, ", "), sw.Run, sw.Runs, sw.Own)
}
