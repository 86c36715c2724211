package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
)

// errHelp is returned when the user asked for -h; dptrain exits 0.
var errHelp = errors.New("help requested")

// newFlagSet returns a FlagSet that reports errors instead of exiting.
// Its output is only ever the usage asked for by -h, so it goes to stdout
// (errors are returned and printed once, to stderr, by run).
// Its default help is flagUsage's: the usage line, the command's summary
// and every flag in --flag style.
func newFlagSet(name string, helpOut io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("dptrain "+name, flag.ContinueOnError)
	fs.SetOutput(helpOut)
	fs.Usage = func() { flagUsage(fs, name) }
	return fs
}

// flagUsage prints "usage: dptrain NAME [flags]", the summary of the
// command NAME (when NAME is one of the table's, not a subcommand such as
// "data list") and fs's flags, alphabetically, as train's help prints
// them.
func flagUsage(fs *flag.FlagSet, name string) {
	w := fs.Output()
	fmt.Fprintf(w, "usage: dptrain %s [flags]\n", name)
	if c := lookupCommand(name); c != nil {
		fmt.Fprintf(w, "\n%s\n", strings.Join(wrap(c.summary, helpWidth), "\n"))
	}
	fmt.Fprintf(w, "\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) { writeFlagHelp(w, f) })
}

// parseFlags parses args and maps flag errors to input errors (exit 2).
func parseFlags(fs *flag.FlagSet, args []string) error {
	// The flag package prints the whole usage block on every parse error;
	// a bad value gets one line (the returned error), -h gets the usage.
	out := fs.Output()
	fs.SetOutput(io.Discard)
	restore := acceptScientific(fs)
	err := fs.Parse(args)
	restore()
	fs.SetOutput(out)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.Usage()
			return errHelp
		}
		return badInput("%v%s (see --help)", err, didYouMean(fs, err))
	}
	if fs.NArg() > 0 {
		return badInput("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// finite reports an input error when v is NaN or infinite.
func finite(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return badInput("--%s must be a finite number, got %v", name, v)
	}
	return nil
}

// inOpenUnit checks 0 < v < 1.
func inOpenUnit(name string, v float64) error {
	if err := finite(name, v); err != nil {
		return err
	}
	if !(v > 0 && v < 1) {
		return badInput("--%s must be in (0,1), got %v", name, v)
	}
	return nil
}

// inHalfOpenUnit checks 0 < v <= 1.
func inHalfOpenUnit(name string, v float64) error {
	if err := finite(name, v); err != nil {
		return err
	}
	if !(v > 0 && v <= 1) {
		return badInput("--%s must be in (0,1], got %v", name, v)
	}
	return nil
}

// positive checks v > 0.
func positive(name string, v float64) error {
	if err := finite(name, v); err != nil {
		return err
	}
	if !(v > 0) {
		return badInput("--%s must be > 0, got %v", name, v)
	}
	return nil
}

// noiseMultiplier checks a σ flag: positive and finite, and large enough
// that its variance σ² does not underflow (it would reach the accountant
// as 0 and be reported as "got 0", not as typed).
func noiseMultiplier(name string, v float64) error {
	if err := positive(name, v); err != nil {
		return err
	}
	if v*v < 0x1p-1022 {
		return badInput("--%s %v is too small: its noise variance underflows to 0; use %s >= 1e-150", name, v, name)
	}
	return nil
}

// fmtFloat prints v with enough digits to round-trip.
func fmtFloat(v float64) string { return fmt.Sprintf("%.10g", v) }
