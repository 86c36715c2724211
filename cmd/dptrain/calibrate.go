package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/dptrain/dptrain/accountant"
)

func init() {
	register(&command{
		name:    "calibrate",
		summary: "noise multiplier for a target (ε, δ): --epsilon --delta --q --steps [--accountant rdp|pld]",
		run:     runCalibrate,
	})
}

// runCalibrate prints the smallest noise multiplier (to the tolerance) for
// which Poisson-sampled DP-SGD meets the target under the RDP accountant.
func runCalibrate(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("calibrate", stderr)
	eps := fs.Float64("epsilon", 0, "target epsilon")
	delta := fs.Float64("delta", 0, "target delta")
	q := fs.Float64("q", 0, "Poisson sampling rate")
	steps := fs.Int("steps", 0, "number of training steps")
	tol := fs.Float64("tolerance", accountant.DefaultTolerance, "tolerance in epsilon: the result has target-tol <= epsilon <= target")
	signed := fs.Bool("signed", false, "signed fractional-order series (Opacus, TF Privacy) instead of the proven absolute-value bound")
	acct := fs.String("accountant", "rdp", "accountant: rdp or pld (the tighter privacy loss distribution)")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := requireFlags(fs, "epsilon", "delta", "q", "steps"); err != nil {
		return err
	}
	if err := positive("epsilon", *eps); err != nil {
		return err
	}
	if err := inOpenUnit("delta", *delta); err != nil {
		return err
	}
	if err := inHalfOpenUnit("q", *q); err != nil {
		return err
	}
	if *steps < 1 {
		return badInput("--steps must be >= 1, got %d", *steps)
	}
	if err := positive("tolerance", *tol); err != nil {
		return err
	}
	var (
		sigma float64
		got   accountant.Bound
		err   error
	)
	switch *acct {
	case "pld":
		if *signed {
			return badInput("--signed applies to the rdp accountant only")
		}
		if sigma, got, err = calibratePLD(*eps, *delta, *q, *steps, *tol); err != nil {
			return err
		}
	case "rdp":
		var rdpOpts []accountant.RDPOption
		if *signed {
			rdpOpts = append(rdpOpts, accountant.WithSeries(accountant.SignedSeries))
		}
		sigma, err = accountant.PoissonSigma(*eps, *delta, *q, *steps,
			accountant.WithTolerance(*tol), accountant.WithRDPOptions(rdpOpts...))
		if err != nil {
			return asInput(err)
		}
		if got, err = accountant.PoissonEpsilon(*q, sigma, *steps, *delta, rdpOpts...); err != nil {
			return err
		}
	default:
		return badInput("--accountant must be rdp or pld, got %q", *acct)
	}
	if *jsonOut {
		obj := map[string]any{
			"sigma": sigma, "epsilon": got.Epsilon, "delta": *delta, "q": *q, "steps": *steps,
			"accountant": got.Accountant,
		}
		if got.Order > 0 {
			obj["order"] = got.Order
		}
		data, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", data)
		return err
	}
	_, err = fmt.Fprintf(stdout, "sigma = %s (%s: epsilon = %s at delta = %s, q = %s, %d steps)\n",
		fmtFloat(sigma), got.Accountant, fmtFloat(got.Epsilon), fmtFloat(*delta), fmtFloat(*q), *steps)
	return err
}
