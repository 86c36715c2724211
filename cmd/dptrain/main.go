// Command dptrain trains models with differentially private SGD and reports
// the privacy spent. Each subcommand lives in its own file; this file lists
// them in one table (commandTable), dispatches and maps errors to exit codes.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/dptrain/dptrain/internal/sysmem"
	"github.com/dptrain/dptrain/trainer"
)

// command is one subcommand: run gets the arguments after the subcommand name.
type command struct {
	name    string
	summary string // one line for 'dptrain help'
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commandTable lists every subcommand, in the order 'dptrain help' shows
// them. It is a function, not a variable, because the commands' own help
// reads it (a variable would be an initialization cycle).
func commandTable() []*command {
	return []*command{
		{"train", "train a model with DP-SGD (no flags: the MNIST CNN on the embedded Fashion-MNIST subset, ε = 3)", runTrain},
		{"sweep", "train a small grid (--grid lr=1,2,4 --grid batch=256,512 ...) at reduced steps/data, each run with its own ε account; prints a table", runSweep},
		{"eval", "accuracy, loss and confusion matrix of a saved model: --model RUN/release/model.bin --dataset … [--split test] [--plot FILE.png]", runEval},
		{"predict", "class probabilities as CSV: --model FILE --input FILE.csv [--out FILE.csv]", runPredict},
		{"export", "a model's weights for PyTorch/NumPy/JAX: --model FILE --format safetensors|npy --out PATH", runExport},
		{"privacy", "privacy spent (ε at δ) by a training run: --q --sigma --steps --delta [--accountant rdp]", interruptible(runPrivacy)},
		{"calibrate", "noise multiplier for a target (ε, δ): --epsilon --delta --q --steps [--accountant rdp|pld]", interruptible(runCalibrate)},
		{"audit", "empirical lower bound on ε from a run's release: --canaries M [train flags]; audit bound --canaries --guesses --correct --delta", runAudit},
		{"report", "per-instance privacy report of a linear model released by objective perturbation", runReport},
		{"bench", "table of clip variants × samplers: samples/s, peak memory, noise variance, ε, test accuracy", runBench},
		{"data", "fetch / verify / list datasets", runData},
		{"help", "a command's help: dptrain help <command>", runHelp},
		{"version", "the version and VCS commit of this binary", runVersion},
	}
}

// lookupCommand returns the command called name, or nil.
func lookupCommand(name string) *command {
	for _, c := range commandTable() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// nearestCommand returns the command name closest to name (at most two
// edits), or "".
func nearestCommand(name string) string {
	var names []string
	for _, c := range commandTable() {
		names = append(names, c.name)
	}
	return closest(name, names)
}

// unknownCommand is the error for a command name not in the table, with
// the nearest name as a suggestion.
func unknownCommand(name string) error {
	if near := nearestCommand(name); near != "" {
		return badInput("unknown command %q (did you mean %s?)", name, near)
	}
	return badInput("unknown command %q", name)
}

// runHelp prints the command list, or with a command name that command's
// help (its --help), exiting 0.
func runHelp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelpFlag(args[0]) {
		usage(stdout)
		return nil
	}
	c := lookupCommand(args[0])
	if c == nil {
		return unknownCommand(args[0])
	}
	// 'dptrain help data list' is 'dptrain data list --help'.
	return c.run(ctx, append(slices.Clone(args[1:]), "--help"), stdout, stderr)
}

func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	if len(args) > 0 && isHelpFlag(args[0]) {
		fmt.Fprintf(stdout, "usage: dptrain version\n\n%s\n", lookupCommand("version").summary)
		return errHelp
	}
	if len(args) > 0 {
		return badInput("version takes no arguments")
	}
	fmt.Fprintln(stdout, version())
	return nil
}

func isHelpFlag(s string) bool {
	switch s {
	case "-h", "-help", "--help", "--h":
		return true
	}
	return false
}

// inputError marks an error caused by the user's input: exit code 2.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// badInput returns an error that makes dptrain exit with status 2.
func badInput(format string, args ...any) error {
	return &inputError{fmt.Errorf(format, args...)}
}

// asInput marks err (if non-nil) as caused by user input.
func asInput(err error) error {
	if err == nil {
		return nil
	}
	var ie *inputError
	if errors.As(err, &ie) {
		return err
	}
	return &inputError{err}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: dptrain <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commandTable() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'dptrain help <command>' (or 'dptrain <command> --help') for the flags of a command.")
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch {
	case isHelpFlag(name):
		name = "help"
	case name == "-version" || name == "--version":
		name = "version"
	}
	c := lookupCommand(name)
	if c == nil {
		fmt.Fprintf(stderr, "dptrain: %v\n", unknownCommand(name))
		if nearestCommand(name) == "" {
			usage(stderr)
		}
		return 2
	}
	err := c.run(ctx, args[1:], stdout, stderr)
	if err == nil {
		return 0
	}
	if errors.Is(err, errHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "dptrain %s: %v\n", c.name, err)
	if errors.Is(err, trainer.ErrInterrupted) || errors.Is(err, context.Canceled) {
		return 130 // the shell's convention for SIGINT
	}
	var ie *inputError
	if errors.As(err, &ie) || errors.Is(err, sysmem.ErrTooLarge) {
		return 2
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

func main() {
	os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
}

// mainCode is main without the exit: SIGINT and SIGTERM cancel the
// command's context (every long computation returns within a moment, and
// train writes its checkpoint first), and it returns the exit code.
func mainCode(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopProfile := startProfile(stderr)
	code := run(ctx, args, stdout, stderr)
	stopProfile()
	return code
}
