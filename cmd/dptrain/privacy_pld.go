package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dptrain/dptrain/accountant"
)

// runPrivacyPLD is `dptrain privacy --accountant pld`: DP-SGD with Poisson
// sampling (add/remove-one) by its privacy loss distribution.
func runPrivacyPLD(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("privacy", stdout)
	// The default shown is privacy's (rdp): this section is reached by naming pld.
	fs.String("accountant", "rdp", "accountant: "+strings.Join(knownAccountants(), ", "))
	q := fs.Float64("q", 0, "Poisson sampling rate")
	sigma := fs.Float64("sigma", 0, "noise multiplier: noise standard deviation / clip norm")
	steps := fs.Int("steps", 0, "number of training steps")
	delta := fs.Float64("delta", 0, "target delta")
	n := fs.Int("n", 0, "dataset size (optional: warns when δ ≥ 1/n)")
	interval := fs.Float64("interval", accountant.DefaultPLDInterval, "privacy-loss grid interval (finer: tighter, slower)")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkStepFlags(fs, *q, *sigma, *steps, *delta); err != nil {
		return err
	}
	if err := positive("interval", *interval); err != nil {
		return err
	}
	extra := map[string]any{"sampling": "poisson", "steps": *steps, "q": *q, "sigma": *sigma, "interval": *interval}
	var warns []string
	b, err := accountant.PLDPoissonEpsilon(*q, *sigma, *steps, *delta, accountant.WithPLDInterval(*interval))
	if err != nil {
		if !errors.Is(err, accountant.ErrPLDUncertified) {
			return asInput(err)
		}
		// The PLD cannot certify this query: the bound printed is RDP's,
		// with the reason, never a smaller uncertified number.
		pldErr := err
		if b, err = accountant.PoissonEpsilon(*q, *sigma, *steps, *delta); err != nil {
			return asInput(err)
		}
		warns = append(warns, fmt.Sprintf("%v; epsilon is the RDP accountant's", pldErr))
	}
	warnPrivacy(stderr, extra, append(warns, privacyWarnings(b, nil, *n)...))
	return writePrivacyResult(stdout, *jsonOut, b, extra)
}

// calibratePLD is calibrate's PLD path.
func calibratePLD(eps, delta, q float64, steps int, tol float64) (sigma float64, got accountant.Bound, err error) {
	charges, err := poissonCharges(q, steps)
	if err != nil {
		return 0, got, err
	}
	pld := func(opts ...accountant.PLDOption) func(float64) (float64, error) {
		return accountant.Account(func() (accountant.Accountant, error) { return accountant.NewPLD(opts...) }, charges, delta)
	}
	rdp := accountant.Account(func() (accountant.Accountant, error) { return accountant.NewRDP() }, charges, delta)
	if sigma, err = accountant.Calibrate(pld(), eps, accountant.WithTolerance(tol),
		accountant.WithPLDCertification(pld(accountant.WithPLDInterval(accountant.CalibrationPLDInterval)), rdp)); err != nil {
		return 0, got, asInput(err)
	}
	if got, err = accountant.PLDPoissonEpsilon(q, sigma, steps, delta); err != nil {
		return 0, got, fmt.Errorf("calibrate: %w", err)
	}
	return sigma, got, nil
}
