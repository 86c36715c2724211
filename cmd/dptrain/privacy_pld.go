package main

import (
	"context"
	"io"
	"strings"

	"github.com/dptrain/dptrain/accountant"
)

func init() { privacyHandlers["pld"] = runPrivacyPLD }

// runPrivacyPLD is `dptrain privacy --accountant pld`: DP-SGD with Poisson
// sampling (add/remove-one) by the privacy-loss-distribution accountant.
func runPrivacyPLD(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("privacy", stderr)
	fs.String("accountant", "pld", "accountant: "+strings.Join(knownAccountants(), ", "))
	q := fs.Float64("q", 0, "Poisson sampling rate")
	sigma := fs.Float64("sigma", 0, "noise multiplier: noise standard deviation / clip norm")
	steps := fs.Int("steps", 0, "number of training steps")
	delta := fs.Float64("delta", 0, "target delta")
	interval := fs.Float64("interval", accountant.DefaultPLDInterval, "privacy-loss grid interval (finer: tighter and slower)")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := requireFlags(fs, "q", "sigma", "steps", "delta"); err != nil {
		return err
	}
	if err := checkPLDFlags(*q, *steps, *delta, *interval, "sigma", *sigma); err != nil {
		return err
	}
	b, err := accountant.PoissonPLDEpsilon(*q, *sigma, *steps, *delta, accountant.WithPLDInterval(*interval))
	if err != nil {
		return asInput(err)
	}
	extra := map[string]any{"sampling": "poisson", "steps": *steps, "q": *q, "sigma": *sigma, "interval": *interval}
	return writePrivacyResult(stdout, *jsonOut, b, extra)
}

// checkPLDFlags validates the flags shared by privacy and calibrate with
// --accountant pld; pos names the positive flag (sigma or epsilon).
func checkPLDFlags(q float64, steps int, delta, interval float64, pos string, v float64) error {
	if err := inHalfOpenUnit("q", q); err != nil {
		return err
	}
	if err := positive(pos, v); err != nil {
		return err
	}
	if steps < 1 {
		return badInput("--steps must be >= 1, got %d", steps)
	}
	if err := inOpenUnit("delta", delta); err != nil {
		return err
	}
	if !(interval > 0 && interval <= 1) {
		return badInput("--interval must be in (0,1], got %v", interval)
	}
	return nil
}
