package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/dptrain/dptrain/mechanism"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/dptrain/dptrain/accountant"
)

// privacyHandler runs `dptrain privacy` for one accountant; it parses all
// of args itself.
type privacyHandler func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// privacyHandlers is the one table of `dptrain privacy` handlers, by
// --accountant value. Like commandTable it is a function, not a variable:
// the handlers' help reads the command table (a variable would be an
// initialization cycle).
func privacyHandlers() map[string]privacyHandler {
	return map[string]privacyHandler{
		"rdp":    runPrivacyRDP,    // privacy.go
		"pld":    runPrivacyPLD,    // privacy_pld.go
		"twice":  runPrivacyTwice,  // privacy_papers.go
		"hidden": runPrivacyHidden, // privacy_papers.go
		"srdp":   runPrivacySRDP,   // privacy_papers.go
	}
}

// runPrivacy finds the --accountant value (default "rdp") and hands all of
// args to that accountant's handler.
func runPrivacy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return dispatchPrivacy(ctx, privacyHandlers(), args, stdout, stderr)
}

// dispatchPrivacy runs the handler of table that args' --accountant names.
func dispatchPrivacy(ctx context.Context, table map[string]privacyHandler, args []string, stdout, stderr io.Writer) error {
	name, err := scanAccountant(args)
	if err != nil {
		return err
	}
	if wantsHelp(args) && !slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "-accountant") }) {
		// Every accountant's flags, not only the default one's.
		for _, n := range accountantNames(table) {
			fmt.Fprintf(stdout, "\n== --accountant %s ==\n", n)
			if err := table[n](ctx, []string{"-h"}, stdout, stderr); err != nil && !errors.Is(err, errHelp) {
				return err
			}
		}
		return errHelp
	}
	h, ok := table[name]
	if !ok {
		return badInput("unknown --accountant %q (known: %s)", name, strings.Join(accountantNames(table), ", "))
	}
	return h(ctx, args, stdout, stderr)
}

// scanAccountant pre-scans args for "--accountant X", "--accountant=X" (or
// with one dash), stopping at "--"; the last occurrence wins, as with flag.
func scanAccountant(args []string) (string, error) {
	name := "rdp"
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		key, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if key != "accountant" || strings.HasPrefix(a, "---") {
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return "", badInput("flag needs an argument: --accountant")
			}
			i++
			val = args[i]
		}
		name = val
	}
	return name, nil
}

// knownAccountants is the --accountant values `dptrain privacy` accepts.
func knownAccountants() []string { return accountantNames(privacyHandlers()) }

// accountantNames is table's names, sorted.
func accountantNames(table map[string]privacyHandler) []string {
	names := make([]string, 0, len(table))
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// writePrivacyResult prints one privacy result: with jsonOut a single JSON
// object {"accountant","epsilon","delta","order","relation", extra...}
// ("order" only for RDP bounds, i.e. when b.Order > 0; a non-finite number is
// written as the string "+Inf"/"NaN", since JSON has no such numbers),
// otherwise one readable line. extra adds accountant-specific fields.
func writePrivacyResult(w io.Writer, jsonOut bool, b accountant.Bound, extra map[string]any) error {
	if jsonOut {
		obj := map[string]any{
			"accountant": b.Accountant,
			"epsilon":    jsonNumber(b.Epsilon),
			"delta":      jsonNumber(b.Delta),
			"relation":   b.Relation.String(),
		}
		if b.Order > 0 {
			obj["order"] = jsonNumber(b.Order)
		}
		for k, v := range extra {
			if f, ok := v.(float64); ok {
				v = jsonNumber(f)
			}
			obj[k] = v
		}
		data, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("privacy result: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: epsilon = %s at delta = %s", b.Accountant, fmtFloat(b.Epsilon), fmtFloat(b.Delta))
	if b.Order > 0 {
		fmt.Fprintf(&sb, ", order %s", fmtFloat(b.Order))
	}
	fmt.Fprintf(&sb, " (%s)", b.Relation)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if k != "warnings" { // already on stderr
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := extra[k]
		if f, ok := v.(float64); ok {
			v = fmtFloat(f)
		}
		fmt.Fprintf(&sb, " %s=%v", k, v)
	}
	_, err := fmt.Fprintln(w, sb.String())
	return err
}

// jsonNumber returns v, or a string for the values JSON cannot hold.
func jsonNumber(v float64) any {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return v
}

// runPrivacyRDP is `dptrain privacy --accountant rdp`: DP-SGD with Poisson
// sampling (add/remove-one), or fixed-size batches (replace-one) drawn by
// shuffling or independently without replacement.
func runPrivacyRDP(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("privacy", stdout)
	fs.String("accountant", "rdp", "accountant: "+strings.Join(knownAccountants(), ", "))
	q := fs.Float64("q", 0, "sampling rate: Poisson probability, or batch size / n for shuffle and wor")
	sigma := fs.Float64("sigma", 0, "noise multiplier: noise standard deviation / clip norm")
	steps := fs.Int("steps", 0, "number of training steps")
	delta := fs.Float64("delta", 0, "target delta")
	sampling := fs.String("sampling", "poisson", "batch sampling: poisson (add/remove-one); shuffle or wor (fixed size, replace-one)")
	n := fs.Int("n", 0, "dataset size (required for --sampling shuffle or wor; for poisson, optional: warns when δ ≥ 1/n)")
	signed := fs.Bool("signed", false, "signed fractional-order series (Opacus, TF Privacy) instead of the proven absolute-value bound")
	jsonOut := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkStepFlags(fs, *q, *sigma, *steps, *delta); err != nil {
		return err
	}
	opts := []accountant.RDPOption{}
	extra := map[string]any{"sampling": *sampling, "steps": *steps, "q": *q, "sigma": *sigma}
	if *signed {
		opts = append(opts, accountant.WithSeries(accountant.SignedSeries))
		extra["series"] = "signed"
	}
	// The event comes from the mechanism, as the trainer's does.
	sp := mechanism.Spec{Sampler: mechanism.Sampler(*sampling), Rate: *q, Clip: mechanism.Flat, C: 1}
	switch sp.Sampler {
	case mechanism.Poisson:
	case mechanism.Shuffle, mechanism.WithoutReplacement:
		if *n < 1 {
			return badInput("--n (dataset size) must be >= 1 for --sampling %s, got %d", *sampling, *n)
		}
		b := int(math.Round(*q * float64(*n)))
		if b < 1 || b > *n {
			return badInput("--q %v with --n %d gives batch size %d, outside [1, n]", *q, *n, b)
		}
		// Replace-one: multiplier σ/2 of the 2C sensitivity; shuffling is
		// charged once per epoch begun (mechanism.Mechanism.Charges).
		sp.N, sp.Batch = *n, b
		extra["n"], extra["batch"] = *n, b
	default:
		return badInput("--sampling must be poisson, shuffle or wor, got %q", *sampling)
	}
	mech, err := mechanism.New(sp, nil)
	if err != nil {
		return asInput(err)
	}
	opts = append(opts, accountant.WithRelation(mech.Relation()))
	ev, count := mech.Charges(*sigma, *steps)
	if sp.Sampler == mechanism.Shuffle {
		extra["epochs"] = count
	}
	acc, err := accountant.NewRDP(opts...)
	if err != nil {
		return asInput(err)
	}
	if err := acc.Compose(ev, count); err != nil {
		return asInput(err)
	}
	b, err := acc.Epsilon(*delta)
	if err != nil {
		return asInput(err)
	}
	warnPrivacy(stderr, extra, privacyWarnings(b, acc.Orders(), *n))
	return writePrivacyResult(stdout, *jsonOut, b, extra)
}

// privacyWarnings lists what a reader of a bound should know. With δ ≥ 1/n
// a mechanism that publishes one whole record at random satisfies the
// guarantee, so it promises little. An RDP optimum at the edge of the order
// grid means the grid, not the mechanism, set ε: orders beyond it might
// give a smaller one. orders may be nil (no grid) and n 0 (size unknown).
func privacyWarnings(b accountant.Bound, orders []float64, n int) []string {
	var w []string
	if n > 0 && b.Delta >= 1/float64(n) {
		w = append(w, fmt.Sprintf("δ = %s is at least 1/n = %s: a mechanism that publishes a random record in full meets this guarantee; choose δ well below 1/n", fmtFloat(b.Delta), fmtFloat(1/float64(n))))
	}
	if len(orders) > 1 && b.Order > 0 {
		lo, hi := slices.Min(orders), slices.Max(orders)
		if b.Order == lo || b.Order == hi {
			w = append(w, fmt.Sprintf("the best RDP order, %s, is at the edge of the order grid [%s, %s]: ε is what the grid allows and may be loose (try --accountant pld)", fmtFloat(b.Order), fmtFloat(lo), fmtFloat(hi)))
		}
	}
	return w
}

// warnPrivacy prints warnings to stderr, one line each, and records them
// in the JSON result.
func warnPrivacy(stderr io.Writer, extra map[string]any, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if len(warnings) > 0 {
		extra["warnings"] = warnings
	}
}

// checkStepFlags checks the flags every DP-SGD privacy query takes: all
// given, q in (0,1], σ > 0, steps ≥ 1, δ in (0,1).
func checkStepFlags(fs *flag.FlagSet, q, sigma float64, steps int, delta float64) error {
	if err := requireFlags(fs, "q", "sigma", "steps", "delta"); err != nil {
		return err
	}
	if err := inHalfOpenUnit("q", q); err != nil {
		return err
	}
	if err := noiseMultiplier("sigma", sigma); err != nil {
		return err
	}
	if steps < 1 {
		return badInput("--steps must be >= 1, got %d", steps)
	}
	return inOpenUnit("delta", delta)
}

// requireFlags reports the first of names not given on the command line.
func requireFlags(fs *flag.FlagSet, names ...string) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, n := range names {
		if !set[n] {
			return badInput("--%s is required", n)
		}
	}
	return nil
}

// wantsHelp reports whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}
