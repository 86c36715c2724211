package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/dptrain/dptrain/mechanism"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dptrain/dptrain/benchmarks"
	"github.com/dptrain/dptrain/trainer"
)

// runBench trains the chosen model once per clip × sampler cell and prints
// the table (or JSON); --out also writes bench.csv and bench.md.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	g := benchmarks.DefaultGrid()
	c := &g.Base
	fs := newFlagSet("bench", stdout)
	fs.TextVar(&c.Model, "model", c.Model, "logreg | mlp | cnn (any trainer model)")
	fs.TextVar(&c.Dataset, "dataset", c.Dataset, "embedded | synthetic | fashion-mnist (any trainer dataset)")
	fs.StringVar(&c.DataDir, "data", c.DataDir, "data directory (else $DPTRAIN_DATA, /usr/share/datasets, embedded)")
	fs.IntVar(&c.Steps, "steps", c.Steps, "training steps per cell")
	fs.IntVar(&c.BatchSize, "batch", c.BatchSize, "expected (Poisson, twice) or fixed (shuffle) batch size")
	fs.Float64Var(&c.Sigma, "sigma", c.Sigma, "noise multiplier (exclusive with --epsilon)")
	eps := fs.Float64("epsilon", 0, "target ε: calibrate σ per cell instead of a fixed --sigma")
	fs.Float64Var(&c.Delta, "delta", c.Delta, "δ")
	fs.Float64Var(&c.ClipNorm, "clip-norm", c.ClipNorm, "L2 clip norm C (the L2 sensitivity of every variant)")
	fs.Float64Var(&c.Q2, "q2", c.Q2, "coordinate sampling rate of twice sampling")
	fs.Float64Var(&c.D0, "d0", c.D0, "hybrid clipping: c∞ = C/√d0 (subspace: on the residual block)")
	fs.Float64Var(&c.LR, "lr", c.LR, "learning rate")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of data order, initialisation and noise")
	fs.Float64Var(&c.ClipQuantile, "clip-quantile", c.ClipQuantile, "adaptive clipping to this quantile of the gradient norms (Andrew et al. 2021) in the flat and per-layer × poisson cells, labelled clip+qQ; σ accounts gradient and count (0 = off)")
	clips := fs.String("clips", strings.Join(g.Clips, ","), "clip variants, comma-separated: "+strings.Join(benchmarks.Clips, ", ")+" (subspace: hybrid subspace clipping; the trainer refuses it with shuffle)")
	samplers := fs.String("samplers", strings.Join(g.Samplers, ","), "samplers, comma-separated: "+strings.Join(benchmarks.Samplers, ", "))
	noises := fs.String("noises", "continuous", "noise kinds, comma-separated: "+strings.Join(benchmarks.Noises, ", ")+" (bandmf: --bands bands, cyclic Poisson sampling, poisson cells only)")
	fs.IntVar(&c.Bands, "bands", 4, "noise bandmf: the strategy's bands")
	fs.Var(intList{&c.SubspaceRanks}, "subspace-ranks", "clip subspace: nested cumulative ranks of the principal blocks")
	fs.IntVar(&c.PublicN, "public-n", c.PublicN, "clip subspace: training examples declared public for the basis (removed from the private set)")
	fs.IntVar(&c.PowerIters, "power-iters", c.PowerIters, "clip subspace: power iterations per basis estimate")
	fs.IntVar(&c.SubspaceRefresh, "subspace-refresh", c.SubspaceRefresh, "clip subspace: re-estimate the basis every N steps (0: once)")
	out := fs.String("out", "", "directory for bench.csv and bench.md")
	jsonOut := fs.Bool("json", false, "print one JSON object instead of the table")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["sigma"] && set["epsilon"] {
		return badInput("give --sigma or --epsilon, not both")
	}
	if set["epsilon"] {
		if err := positive("epsilon", *eps); err != nil {
			return err
		}
		c.Sigma, c.Epsilon = 0, *eps
	} else if err := noiseMultiplier("sigma", c.Sigma); err != nil {
		return err
	}
	if c.Steps < 1 {
		return badInput("--steps must be >= 1, got %d", c.Steps)
	}
	var err error
	if g.Clips, err = parseNames("clips", *clips, benchmarks.Clips); err != nil {
		return err
	}
	if g.Noises, err = parseNames("noises", *noises, benchmarks.Noises); err != nil {
		return err
	}
	if g.Samplers, err = parseNames("samplers", *samplers, benchmarks.Samplers); err != nil {
		return err
	}
	// Check the shared settings once (as the first cell, with twice sampling
	// when it is asked for so q2 is checked) rather than failing every row.
	probe := trainer.WithoutQuantile(*c)
	probe.Clip, probe.Sampler = mechanism.Hybrid, mechanism.Sampler(g.Samplers[0])
	if slices.Contains(g.Samplers, mechanism.Twice.String()) {
		probe.Sampler = mechanism.Twice
	}
	if err := probe.Validate(); err != nil {
		return asInput(err)
	}
	if c.ClipQuantile > 0 {
		qp := *c
		qp.Clip, qp.Sampler = mechanism.Flat, mechanism.Poisson
		if err := qp.Validate(); err != nil {
			return asInput(err)
		}
	}
	if slices.Contains(g.Clips, mechanism.Subspace.String()) {
		// The subspace settings too, with a sampler it accepts (the
		// subspace × shuffle cell is left to carry the trainer's refusal).
		probe.Clip = mechanism.Subspace
		if probe.Sampler == mechanism.Shuffle {
			probe.Sampler = mechanism.Poisson
		}
		if err := probe.Validate(); err != nil {
			return asInput(err)
		}
	}
	if !*jsonOut {
		g.Log = stderr
	}
	rows, runErr := benchmarks.Run(ctx, g)
	if len(rows) == 0 && runErr != nil {
		return runErr
	}
	if *out != "" {
		if err := writeBenchFiles(*out, g, rows); err != nil {
			return err
		}
	}
	if *jsonOut {
		b, err := json.Marshal(struct {
			Setup string           `json:"setup"`
			Rows  []benchmarks.Row `json:"rows"`
		}{g.Describe(), rows})
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout, g.Describe())
		if err := benchmarks.WriteTable(stdout, rows); err != nil {
			return err
		}
	}
	if runErr != nil {
		return runErr
	}
	failed := 0
	for _, r := range rows {
		if r.Err != "" {
			failed++
		}
	}
	if failed == len(rows) {
		return fmt.Errorf("every cell failed; first error: %s", rows[0].Err)
	}
	return nil
}

// parseNames splits a comma-separated list of names from known, refusing
// unknown, empty and repeated names.
func parseNames(flagName, s string, known []string) ([]string, error) {
	var names []string
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
			return nil, badInput("--%s has an empty name in %q", flagName, s)
		case !slices.Contains(known, f):
			return nil, badInput("--%s: unknown name %q (want some of %s)", flagName, f, strings.Join(known, ", "))
		case slices.Contains(names, f):
			return nil, badInput("--%s names %q twice", flagName, f)
		}
		names = append(names, f)
	}
	return names, nil
}

// writeBenchFiles writes dir/bench.csv and dir/bench.md (setup line, then
// the table).
func writeBenchFiles(dir string, g benchmarks.Grid, rows []benchmarks.Row) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	var csvBuf, md strings.Builder
	if err := benchmarks.WriteCSV(&csvBuf, rows); err != nil {
		return err
	}
	fmt.Fprintf(&md, "# dptrain bench\n\n%s\n\n", g.Describe())
	if err := benchmarks.WriteMarkdown(&md, rows); err != nil {
		return err
	}
	for name, data := range map[string]string{"bench.csv": csvBuf.String(), "bench.md": md.String()} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return nil
}
