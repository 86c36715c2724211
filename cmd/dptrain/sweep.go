package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dptrain/dptrain/benchmarks"
	"github.com/dptrain/dptrain/mechanism"
	"github.com/dptrain/dptrain/trainer"
)

// gridAxis is one --grid NAME=V1,V2,...: a train flag and its values.
type gridAxis struct {
	name   string
	values []string
}

type gridFlag struct{ axes *[]gridAxis }

func (g gridFlag) String() string { return "" }

func (g gridFlag) Set(s string) error {
	name, vals, ok := strings.Cut(s, "=")
	name = strings.TrimLeft(strings.TrimSpace(name), "-")
	if !ok || name == "" || vals == "" {
		return fmt.Errorf("want NAME=V1,V2,..., got %q", s)
	}
	for _, a := range *g.axes {
		if a.name == name {
			return fmt.Errorf("flag %s swept twice", name)
		}
	}
	var vs []string
	for _, v := range strings.Split(vals, ",") {
		if v = strings.TrimSpace(v); v == "" {
			return fmt.Errorf("empty value in %q", s)
		}
		vs = append(vs, v)
	}
	*g.axes = append(*g.axes, gridAxis{name, vs})
	return nil
}

// sweepRow is one finished (or failed) run of the grid. A run that failed
// mid-training has the partial account of the steps it took as its sum.
// (No wall time: it moves with the realised batch sizes, a statistic of
// the training data; see trainer/outputs.go.)
type sweepRow struct {
	values []string
	cfg    trainer.Config
	sum    *trainer.Summary
	err    error
}

// runSweep trains every combination of the grid axes from the base flags.
// Each run is an ordinary trainer run (its σ calibrated or budget-checked
// for its own steps and q), so each row's ε is that run's account.
func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	base := trainer.Default()
	base.EvalEvery, base.CheckpointEvery, base.Plots = 0, 0, false
	fs := newFlagSet("sweep", stdout)
	trainFlags(fs, &base)
	var axes []gridAxis
	fs.Var(gridFlag{&axes}, "grid", "a train flag and its values, NAME=V1,V2,... (repeat for more axes; the table has one row per combination)")
	maxRuns := fs.Int("max-runs", 64, "refuse grids with more combinations than this")
	fs.Usage = func() {
		groupedUsage(fs, `usage: dptrain sweep --grid NAME=V1,V2 [--grid ...] [train flags]

Trains one run per combination of the grid's values, each with its own ε
account, and prints one table. Choosing a row by accuracy on private data
is itself a release; tune on public or held-out proxy data.
`, []string{"grid", "max-runs"})
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["seed"] && !set["seeded"] {
		base.Seeded = true // as in train: an explicit --seed asks for reproducible runs
	}
	if len(axes) == 0 {
		return badInput("give at least one --grid NAME=V1,V2,...")
	}
	for _, a := range axes {
		if a.name == "out" || a.name == "grid" || fs.Lookup(a.name) == nil {
			return badInput("--grid %s: not a train flag that can be swept", a.name)
		}
	}
	total := 1
	for _, a := range axes {
		total *= len(a.values)
	}
	if total > *maxRuns {
		return badInput("--grid has %d combinations, more than --max-runs %d", total, *maxRuns)
	}
	if err := base.Validate(); err != nil {
		return asInput(err)
	}
	// Check every combination before training any.
	cfgs := make([]trainer.Config, 0, total)
	combos := make([][]string, 0, total)
	idx := make([]int, len(axes))
	for range total {
		vals := make([]string, len(axes))
		var fargs []string
		for k, a := range axes {
			vals[k] = a.values[idx[k]]
			fargs = append(fargs, "--"+a.name+"="+vals[k])
		}
		c := base
		c.Hidden, c.SubspaceRanks = slices.Clone(base.Hidden), slices.Clone(base.SubspaceRanks)
		cfs := flag.NewFlagSet("sweep", flag.ContinueOnError)
		cfs.SetOutput(io.Discard)
		trainFlags(cfs, &c)
		if err := cfs.Parse(fargs); err != nil {
			return badInput("--grid %s: %v", strings.Join(vals, ","), err)
		}
		if cfs.Lookup("seed") != nil && gridHas(axes, "seed") && !gridHas(axes, "seeded") && !set["seeded"] {
			c.Seeded = true // a swept --seed is an explicit --seed, as in train
		}
		if base.OutDir != "" {
			c.OutDir = filepath.Join(base.OutDir, fmt.Sprintf("run-%02d", len(cfgs)+1))
		}
		if err := c.Validate(); err != nil {
			return asInput(fmt.Errorf("--grid %s: %w", strings.Join(fargs, " "), err))
		}
		cfgs, combos = append(cfgs, c), append(combos, vals)
		for k := len(axes) - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < len(axes[k].values) {
				break
			}
			idx[k] = 0
		}
	}
	rows := make([]sweepRow, 0, total)
	for i, c := range cfgs {
		if err := ctx.Err(); err != nil {
			break
		}
		fmt.Fprintf(stderr, "sweep %d/%d: %s\n", i+1, total, strings.Join(combos[i], " "))
		sum, err := trainer.Run(ctx, c, trainer.Options{})
		if sum == nil {
			// A failed run's steps are charged like a finished run's.
			sum = trainer.PartialAccount(err)
		}
		rows = append(rows, sweepRow{values: combos[i], cfg: c, sum: sum, err: err})
		if errors.Is(err, trainer.ErrInterrupted) {
			break
		}
	}
	writeSweepTable(stdout, axes, rows)
	totals, delta, err := writeSweepTotal(stdout, rows)
	if err != nil {
		return err
	}
	if err := stampSweepTotals(rows, totals, delta); err != nil {
		return err
	}
	failed := 0
	for _, r := range rows {
		if r.err != nil {
			failed++
		}
	}
	if err := ctx.Err(); err != nil {
		return err // interrupted: the runs failed because of it
	}
	if failed == len(rows) && len(rows) > 0 {
		return fmt.Errorf("every run failed; first error: %w", rows[0].err)
	}
	return ctx.Err()
}

func writeSweepTable(w io.Writer, axes []gridAxis, rows []sweepRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, a := range axes {
		fmt.Fprintf(tw, "%s\t", a.name)
	}
	fmt.Fprintln(tw, "steps\tσ\tε\taccountant\tnoise/E[B]²\ttest acc\ttest loss")
	seeded := false
	for _, r := range rows {
		for _, v := range r.values {
			fmt.Fprintf(tw, "%s\t", v)
		}
		s := r.sum
		switch {
		case s == nil:
			fmt.Fprintf(tw, "error: %v\n", r.err)
			continue
		}
		eps := fmt.Sprintf("%.4f", s.Best.Epsilon)
		if !s.PrivateRelease {
			eps += benchmarks.NotPrivateMark
			seeded = true
		}
		if r.err != nil {
			// Interrupted or failed: the steps taken (the failing one
			// included) and their ε, which the total composes.
			fmt.Fprintf(tw, "%d/%d\t%.4f\t%s\t%s\t\t\t\t(%v)\n", s.Steps, s.PlannedStep, s.Sigma, eps, s.Best.Accountant, r.err)
			continue
		}
		fmt.Fprintf(tw, "%d\t%.4f\t%s\t%s\t%.4g\t%.4f\t%.4f\n", s.Steps, s.Sigma, eps, s.Best.Accountant, noisePerMean(r.cfg, s), s.TestAcc, s.TestLoss)
	}
	tw.Flush()
	if seeded {
		fmt.Fprintln(w, benchmarks.NotPrivateNote)
	}
}

// writeSweepTotal prints the composed ε of every run of the table (one
// total per neighbouring relation) and what the rows' figures mean, and
// returns the totals and their δ.
func writeSweepTotal(w io.Writer, rows []sweepRow) ([]trainer.RunsTotal, float64, error) {
	sums := make([]*trainer.Summary, len(rows))
	delta, seeded := 0.0, ""
	for i, r := range rows {
		sums[i] = r.sum
		if r.sum != nil {
			delta = max(delta, r.cfg.Delta)
			if !r.sum.PrivateRelease {
				seeded = benchmarks.NotPrivateMark
			}
		}
	}
	totals, err := trainer.ComposeRuns(sums, delta)
	if err != nil {
		return nil, 0, fmt.Errorf("sweep total: %w", err)
	}
	for _, t := range totals {
		which := fmt.Sprintf("all %d runs", len(t.Runs))
		if len(totals) > 1 || len(t.Runs) < len(rows) {
			nums := make([]string, len(t.Runs))
			for k, i := range t.Runs {
				nums[k] = fmt.Sprint(i + 1)
			}
			which = "runs " + strings.Join(nums, ", ") + " (in table order)"
		}
		fmt.Fprintf(w, "total: ε = %.4f%s (δ = %g) under %s neighbouring %s (%s), composing every step of %s: the cost of this table on the training data\n",
			t.Bound.Epsilon, seeded, delta, t.Bound.Relation, trainer.NPublic, t.Bound.Accountant, which)
	}
	if len(totals) > 1 {
		fmt.Fprintln(w, "note: the totals do not add: ε under add-remove and under replace-one neighbours are different guarantees, each covering only its own runs (by group privacy an add-remove bound gives a replace-one bound of twice the ε, with a larger δ)")
	}
	fmt.Fprintln(w, "note: a row's ε covers that run alone. Its test acc is measured on the test set, treated as public, but every run trained on the same private data: publishing a run chosen from this table, or several, is covered by the total above, not by its row's ε; and the chosen row's test accuracy, selected on the test set, overstates its accuracy on new data (keep a separate test set for the final figure)")
	return totals, delta, nil
}

// stampSweepTotals writes into every written run's summary and report the
// total that covers it (each run's directory would otherwise claim only
// its own ε).
func stampSweepTotals(rows []sweepRow, totals []trainer.RunsTotal, delta float64) error {
	for _, t := range totals {
		for _, i := range t.Runs {
			if err := trainer.StampSweepTotal(rows[i].sum, i+1, len(rows), t, delta); err != nil {
				return fmt.Errorf("sweep total: %w", err)
			}
		}
	}
	return nil
}

// noisePerMean is one step's noise variance on the averaged gradient,
// E‖e‖²/E[B]², E[B] = n·q (times q2 under twice sampling, whose rows each
// example contributes to; noise bandmf with sampler cyclic: n·q/b, q the
// rate within a part):
// paper 003's comparison of methods.
func noisePerMean(c trainer.Config, s *trainer.Summary) float64 {
	eb := float64(s.CoveredN) * s.Q
	if c.Sampler == mechanism.Twice {
		eb *= c.Q2
	}
	if c.Noise == trainer.NoiseBandMF && c.Bands > 0 && c.Sampler == mechanism.Cyclic {
		eb /= float64(c.Bands) // q is the rate within one of the bands' parts
	}
	return s.NoiseVariance / (eb * eb)
}

func gridHas(axes []gridAxis, name string) bool {
	return slices.ContainsFunc(axes, func(a gridAxis) bool { return a.name == name })
}
