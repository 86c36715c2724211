package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/dptrain/dptrain/accountant"
)

// privacyHandlers maps an --accountant value to its handler; the handler parses all of args itself.
var privacyHandlers = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{}

func init() {
	register(&command{
		name:    "privacy",
		summary: "privacy spent (ε at δ) by a training run: --q --sigma --steps --delta [--accountant rdp]",
		run:     runPrivacy,
	})
}

// runPrivacy finds the --accountant value (default "rdp") and hands all of
// args to that accountant's handler.
func runPrivacy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	name, err := scanAccountant(args)
	if err != nil {
		return err
	}
	h, ok := privacyHandlers[name]
	if !ok {
		return badInput("unknown --accountant %q (known: %s)", name, strings.Join(knownAccountants(), ", "))
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

func knownAccountants() []string {
	names := make([]string, 0, len(privacyHandlers))
	for n := range privacyHandlers {
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
		keys = append(keys, k)
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
