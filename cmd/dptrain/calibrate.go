package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/dptrain/dptrain/mechanism"
	"io"
	"math"

	"github.com/dptrain/dptrain/accountant"
)

// runCalibrate prints the smallest noise multiplier (to the tolerance) for
// which Poisson-sampled DP-SGD meets the target under the RDP accountant.
func runCalibrate(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("calibrate", stdout)
	eps := fs.Float64("epsilon", 0, "target epsilon")
	delta := fs.Float64("delta", 0, "target delta")
	q := fs.Float64("q", 0, "Poisson sampling rate")
	steps := fs.Int("steps", 0, "number of training steps")
	tol := fs.Float64("tolerance", 1e-4, "relative tolerance: the result has (1-tol)·target <= epsilon <= target")
	n := fs.Int("n", 0, "training set size: with --batch and --epochs, instead of --q and --steps")
	batch := fs.Int("batch", 0, "expected batch size (with --n)")
	epochs := fs.Float64("epochs", 0, "epochs (with --n): steps = ceil(epochs·n/batch)")
	signed := fs.Bool("signed", false, "signed fractional-order series (Opacus, TF Privacy) instead of the proven absolute-value bound")
	acct := fs.String("accountant", "rdp", "accountant: rdp or pld (the tighter privacy loss distribution)")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *n > 0 || *batch > 0 || *epochs > 0 {
		if err := requireFlags(fs, "epsilon", "delta", "n", "batch", "epochs"); err != nil {
			return err
		}
		if *batch < 1 || *batch > *n || !(*epochs > 0) {
			return badInput("need 1 <= --batch <= --n and --epochs > 0, got batch %d, n %d, epochs %v", *batch, *n, *epochs)
		}
		*q = float64(*batch) / float64(*n)
		*steps = int(math.Ceil(*epochs * float64(*n) / float64(*batch)))
	} else if err := requireFlags(fs, "epsilon", "delta", "q", "steps"); err != nil {
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
	if *tol >= 1 {
		return badInput("--tolerance is relative and must be below 1, got %v", *tol)
	}
	if *n > 0 && *delta >= 1/float64(*n) {
		fmt.Fprintf(stderr, "warning: delta = %s >= 1/n = %s: a mechanism that publishes one record at random meets it; take delta well below 1/n\n", fmtFloat(*delta), fmtFloat(1/float64(*n)))
	}
	absTol := *tol * *eps
	var (
		sigma float64
		got   accountant.Bound
		err   error
	)
	var rdpOpts []accountant.RDPOption
	if *signed {
		rdpOpts = append(rdpOpts, accountant.WithSeries(accountant.SignedSeries))
	}
	switch *acct {
	case "pld":
		if *signed {
			return badInput("--signed applies to the rdp accountant only")
		}
		if sigma, got, err = calibratePLD(*eps, *delta, *q, *steps, absTol); err != nil {
			return err
		}
	case "rdp":
		charges, err := poissonCharges(*q, *steps)
		if err != nil {
			return err
		}
		newRDP := func() (accountant.Accountant, error) { return accountant.NewRDP(rdpOpts...) }
		if sigma, err = accountant.Calibrate(accountant.Account(newRDP, charges, *delta), *eps, accountant.WithTolerance(absTol)); err != nil {
			return asInput(err)
		}
		if got, err = accountant.PoissonEpsilon(*q, sigma, *steps, *delta, rdpOpts...); err != nil {
			return err
		}
	default:
		return badInput("--accountant must be rdp or pld, got %q", *acct)
	}
	if got.Epsilon > *eps {
		// Only the PLD path gets here: where its grid certifies no σ the
		// calibration keeps the RDP σ, which meets the target by RDP.
		if b, err := accountant.PoissonEpsilon(*q, sigma, *steps, *delta); err == nil && b.Epsilon <= *eps {
			fmt.Fprintf(stderr, "warning: the %s accountant gives epsilon = %s at sigma = %s, above the target %s: its loss grid certifies no sigma here; the sigma printed meets the target by the RDP accountant (epsilon = %s), which is safe\n",
				got.Accountant, fmtFloat(got.Epsilon), fmtFloat(sigma), fmtFloat(*eps), fmtFloat(b.Epsilon))
		} else {
			fmt.Fprintf(stderr, "warning: the %s accountant gives epsilon = %s at sigma = %s, above the target %s\n",
				got.Accountant, fmtFloat(got.Epsilon), fmtFloat(sigma), fmtFloat(*eps))
		}
	} else if got.Epsilon < (1-*tol)**eps {
		// The search brackets the target to float resolution, so ε(σ)
		// crosses it in a jump here (RDP's ε is clipped at 0; PLD's drops
		// to 0 once δ covers the whole loss), or every σ meets it.
		below := sigma * (1 - 1e-6)
		var b accountant.Bound
		if *acct == "pld" {
			b, err = accountant.PLDPoissonEpsilon(*q, below, *steps, *delta)
		} else {
			b, err = accountant.PoissonEpsilon(*q, below, *steps, *delta, rdpOpts...)
		}
		tv := ""
		if got.Epsilon == 0 {
			tv = " (epsilon = 0: delta covers the whole privacy loss there, the mechanism's total-variation bound)"
		}
		switch {
		case err == nil && b.Epsilon > *eps:
			fmt.Fprintf(stderr, "warning: no sigma gives epsilon within the relative tolerance %s of the target: the %s accountant's epsilon jumps from %s to %s at sigma = %s%s; the sigma printed is the smallest that meets the target\n",
				fmtFloat(*tol), got.Accountant, fmtFloat(b.Epsilon), fmtFloat(got.Epsilon), fmtFloat(sigma), tv)
		default:
			fmt.Fprintf(stderr, "warning: the %s accountant gives epsilon = %s at sigma = %s, below the target by more than the relative tolerance %s, and the search found no sigma above the target near it%s\n",
				got.Accountant, fmtFloat(got.Epsilon), fmtFloat(sigma), fmtFloat(*tol), tv)
		}
	}
	if orders := accountant.DefaultOrders(); *acct == "rdp" && got.Order > 0 && (got.Order <= orders[0] || got.Order >= orders[len(orders)-1]) {
		fmt.Fprintf(stderr, "warning: the best RDP order %s is at the edge of the order grid [%s, %s]; epsilon may be loose (a wider grid could give less noise)\n", fmtFloat(got.Order), fmtFloat(orders[0]), fmtFloat(orders[len(orders)-1]))
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

// poissonCharges is the event of steps DP-SGD steps with Poisson sampling at
// rate q and noise multiplier σ, from the mechanism as the trainer's is.
func poissonCharges(q float64, steps int) (func(sigma float64) (accountant.Event, int), error) {
	m, err := mechanism.New(mechanism.Spec{Sampler: mechanism.Poisson, Rate: q, Clip: mechanism.Flat, C: 1}, nil)
	if err != nil {
		return nil, asInput(err)
	}
	return func(s float64) (accountant.Event, int) { return m.Charges(s, steps) }, nil
}
