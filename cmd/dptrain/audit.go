package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/dptrain/dptrain/audit"
	"github.com/dptrain/dptrain/audit/lowerbound"
	"github.com/dptrain/dptrain/datasets"
	"github.com/dptrain/dptrain/trainer"
)

// exitError carries a specific exit status (audit: 3 when the lower bound
// contradicts the accounted ε).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "bound" {
		return runAuditBound(ctx, args[1:], stdout, stderr)
	}
	cfg := trainer.Default()
	cfg.OutDir = "runs/audit"
	if path, ok, err := scanFlagValue(args, "config"); err != nil {
		return asInput(err)
	} else if ok {
		if cfg, err = trainer.LoadConfig(path, cfg); err != nil {
			return asInput(err)
		}
	}
	fs := newFlagSet("audit", stdout)
	fs.String("config", "", "JSON config file of the audited run (flags override it)")
	trainFlags(fs, &cfg)
	m := fs.Int("canaries", 1000, "number of canaries (each included with probability ½)")
	kind := trainer.AuditGradient
	fs.TextVar(&kind, "kind", kind, "canary kind: gradient (white-box canaries in an extra block of the released vector) or input (mislabelled test images added to the training set, scored by their loss under the released model)")
	conf := fs.Float64("confidence", 0.95, "confidence of the lower bound")
	quiet := fs.Bool("quiet", false, "no progress bar")
	jsonOut := fs.Bool("json", false, "print the audit as one JSON object")
	fs.Usage = func() {
		groupedUsage(fs, `usage: dptrain audit [--canaries M] [--kind gradient|input] [train flags]
       dptrain audit bound --canaries M --guesses G --correct C --delta D

Trains the run with M canaries, each included with probability ½, and
prints the empirical lower bound on ε that the release supports next to
the accounted ε (exit 3 when the lower bound exceeds it).
`, []string{"canaries", "kind", "confidence"})
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *m < 2 {
		return badInput("--canaries must be >= 2, got %d", *m)
	}
	if !(*conf > 0 && *conf < 1) {
		return badInput("--confidence must be in (0,1), got %v", *conf)
	}
	cfg.AuditCanaries, cfg.AuditKind = *m, kind
	if err := cfg.Validate(); err != nil {
		return asInput(err)
	}
	warnLearningRate(stderr, cfg.LR)
	opts := trainer.Options{Progress: trainer.ProgressBar, Out: stderr, Log: stderr}
	if !isTerminal(stderr) {
		opts.Progress = trainer.ProgressLines
	}
	if *quiet || *jsonOut {
		opts.Progress, opts.Out = trainer.ProgressQuiet, nil
	}
	res, sum, err := audit.Run(ctx, cfg, opts, *m, kind, *conf)
	if err != nil {
		if errors.Is(err, trainer.ErrInvalidConfig) || errors.Is(err, datasets.ErrBadData) {
			return asInput(err)
		}
		return err
	}
	if *jsonOut {
		b, _ := json.Marshal(res)
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		fmt.Fprintf(stdout, "run       %s, %d steps, σ = %.4f, test accuracy %.2f%%\n", sum.Model, sum.Steps, sum.Sigma, 100*sum.TestAcc)
		fmt.Fprintf(stdout, "privacy   (ε = %.4f, δ = %g)-DP under %s %s (%s): the accounted upper bound\n", res.Accounted.Epsilon, res.Accounted.Delta, res.Accounted.Relation, trainer.NPublic, res.Accounted.Accountant)
		fmt.Fprintf(stdout, "audit     ε_lower = %.4f (%g%%, %d canaries, %d guesses, %d correct; %s)\n",
			res.EpsilonLower, 100*res.Confidence, res.Canaries, res.Guesses, res.Correct, res.Correction)
		verdict := "consistent: the lower bound does not exceed the accounted ε (a one-run, final-model audit sits well below a correct ε)"
		if res.Contradicts {
			verdict = "CONTRADICTION: the release proves more privacy loss than the account allows; please report this as a bug"
		}
		fmt.Fprintf(stdout, "verdict   %s\n", verdict)
		fmt.Fprintf(stdout, "outputs   %s/private/audit_scores.png (canary scores, included vs excluded: drawn from the private inclusion bits, curator only)\n", cfg.OutDir)
	}
	if res.Contradicts {
		return &exitError{3, fmt.Errorf("ε_lower = %.4f exceeds the accounted ε = %.4f", res.EpsilonLower, res.Accounted.Epsilon)}
	}
	return nil
}

// runAuditBound is `dptrain audit bound`: the one-run lower bound for given
// counts (the statistics alone).
func runAuditBound(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit bound", stdout)
	m := fs.Int("canaries", 0, "number of canaries m")
	r := fs.Int("guesses", 0, "number of guesses r (k+ + k−)")
	v := fs.Int("correct", 0, "number of correct guesses v")
	delta := fs.Float64("delta", 0, "δ of the hypothesis")
	conf := fs.Float64("confidence", 0.95, "confidence 1 − p")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := requireFlags(fs, "canaries", "guesses", "correct", "delta"); err != nil {
		return err
	}
	eps, err := lowerbound.OneRunEpsilonContext(ctx, *m, *r, *v, *delta, *conf)
	if errors.Is(err, lowerbound.ErrInvalid) {
		return asInput(err)
	} else if err != nil {
		return err
	}
	if *jsonOut {
		b, _ := json.Marshal(map[string]any{"epsilon_lower": eps, "canaries": *m, "guesses": *r, "correct": *v, "delta": *delta, "confidence": *conf})
		fmt.Fprintf(stdout, "%s\n", b)
		return nil
	}
	fmt.Fprintf(stdout, "ε_lower = %.6f (%g%% confidence, %d canaries, %d guesses, %d correct, δ = %g)\n", eps, 100**conf, *m, *r, *v, *delta)
	return nil
}
