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
		summary: "noise multiplier for a target (ε, δ): --epsilon --delta --q --steps",
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
	jsonOut := fs.Bool("json", false, "print one JSON object")
	acct := fs.String("accountant", "rdp", "accountant: rdp | pld")
	interval := fs.Float64("interval", accountant.DefaultPLDInterval, "pld: privacy-loss grid interval")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := requireFlags(fs, "epsilon", "delta", "q", "steps"); err != nil {
		return err
	}
	switch *acct {
	case "rdp":
	case "pld":
		return calibratePLD(stdout, *jsonOut, *eps, *delta, *q, *steps, *tol, *interval)
	default:
		return badInput("unknown --accountant %q (known: pld, rdp)", *acct)
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
	var rdpOpts []accountant.RDPOption
	if *signed {
		rdpOpts = append(rdpOpts, accountant.WithSeries(accountant.SignedSeries))
	}
	sigma, err := accountant.PoissonSigma(*eps, *delta, *q, *steps,
		accountant.WithTolerance(*tol), accountant.WithRDPOptions(rdpOpts...))
	if err != nil {
		return asInput(err)
	}
	got, err := accountant.PoissonEpsilon(*q, sigma, *steps, *delta, rdpOpts...)
	if err != nil {
		return err
	}
	if *jsonOut {
		data, err := json.Marshal(map[string]any{
			"sigma": sigma, "epsilon": got.Epsilon, "delta": *delta, "q": *q, "steps": *steps,
			"accountant": "rdp", "order": got.Order,
		})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", data)
		return err
	}
	_, err = fmt.Fprintf(stdout, "sigma = %s (rdp: epsilon = %s at delta = %s, q = %s, %d steps)\n",
		fmtFloat(sigma), fmtFloat(got.Epsilon), fmtFloat(*delta), fmtFloat(*q), *steps)
	return err
}

// calibratePLD is `dptrain calibrate --accountant pld`.
func calibratePLD(stdout io.Writer, jsonOut bool, eps, delta, q float64, steps int, tol, interval float64) error {
	if err := checkPLDFlags(q, steps, delta, interval, "epsilon", eps); err != nil {
		return err
	}
	if err := positive("tolerance", tol); err != nil {
		return err
	}
	opts := []accountant.PLDOption{accountant.WithPLDInterval(interval)}
	sigma, err := accountant.PoissonPLDSigma(eps, delta, q, steps, opts, accountant.WithTolerance(tol))
	if err != nil {
		return asInput(err)
	}
	got, err := accountant.PoissonPLDEpsilon(q, sigma, steps, delta, opts...)
	if err != nil {
		return err
	}
	if jsonOut {
		data, err := json.Marshal(map[string]any{
			"sigma": sigma, "epsilon": got.Epsilon, "delta": delta, "q": q, "steps": steps,
			"accountant": "pld", "interval": interval,
		})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", data)
		return err
	}
	_, err = fmt.Fprintf(stdout, "sigma = %s (pld: epsilon = %s at delta = %s, q = %s, %d steps)\n",
		fmtFloat(sigma), fmtFloat(got.Epsilon), fmtFloat(delta), fmtFloat(q), steps)
	return err
}
