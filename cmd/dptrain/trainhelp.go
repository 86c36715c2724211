package main

import (
	"encoding"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// trainGroups orders train's flags the way a user reads them: what to
// train on, what to train, the privacy promise, how to optimise, what the
// run writes, and last the research variants most runs never touch.
// TestTrainHelpGroups checks that every flag sits in exactly one group.
var trainGroups = []struct {
	title string
	flags []string
}{
	{"Data", []string{"dataset", "data", "train", "test", "label-column", "classes", "channels", "resize", "train-limit", "test-limit",
		"features", "feature-norm", "feature-groups", "feature-norm-sigma", "feature-norm-clip", "feature-cache",
		"scale", "feature-bounds", "scale-sigma", "scale-epsilon-fraction"}},
	{"Model", []string{"model", "hidden", "weight-std"}},
	{"Privacy", []string{"epsilon", "delta", "sigma", "noise", "bands", "accountant", "sampler", "batch", "clip", "clip-norm",
		"clip-quantile", "quantile-lr", "quantile-count-sigma", "seed", "seeded"}},
	{"Optimisation", []string{"epochs", "steps", "optimizer", "lr", "momentum", "weight-decay", "schedule",
		"ema", "augmult", "max-physical-batch", "precision"}},
	{"Outputs and runs", []string{"out", "config", "resume", "overwrite", "eval-every", "checkpoint-every",
		"keep-checkpoint", "plots", "final-only", "quiet", "json", "private-diagnostics", "distributed", "rank-timeout"}},
	{"Research variants", []string{"q2", "d0", "subspace-ranks", "public-n", "public-data", "power-iters",
		"subspace-refresh", "dpsgdf", "dpsgdf-variant", "feature-epsilon", "feature-clip", "preprocess",
		"pca-k", "pca-dim", "eigen-gap-min", "sigma-min", "lipschitz-mu", "radius", "clipped-count-sigma",
		"per-instance"}},
}

// trainUsage prints train's flags by group, each with its default.
func trainUsage(fs *flag.FlagSet) {
	groupedUsage(fs, `usage: dptrain train [flags]

Trains a model with DP-SGD and writes OUT/release/ (publishable) and
OUT/private/ (never publish). With no flags: the MNIST CNN on the embedded
Fashion-MNIST subset at ε = 3. Numbers accept 1e6-style notation.
`, nil)
}

// groupedUsage prints intro, then the flags of extra (the command's own,
// first) and of trainGroups that fs defines, group by group.
func groupedUsage(fs *flag.FlagSet, intro string, extra []string) {
	w := fs.Output()
	fmt.Fprint(w, intro)
	groups := trainGroups
	if len(extra) > 0 {
		groups = append([]struct {
			title string
			flags []string
		}{{"This command", extra}}, trainGroups...)
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.flags {
			if f := fs.Lookup(name); f != nil {
				writeFlagHelp(w, f)
			}
		}
	}
}

func writeFlagHelp(w io.Writer, f *flag.Flag) {
	typ, usage := flag.UnquoteUsage(f)
	if g, ok := f.Value.(flag.Getter); ok && typ == "value" {
		if _, ok := g.Get().(encoding.TextUnmarshaler); ok {
			typ = "string" // a config choice (fs.TextVar): one of its constants
		}
	}
	head := "  --" + f.Name
	if typ != "" {
		head += " " + typ
	}
	if len(head) <= 24 {
		fmt.Fprintf(w, "%-26s", head)
	} else {
		fmt.Fprintf(w, "%s\n%26s", head, "")
	}
	if d := f.DefValue; d != "" && d != "0" && d != "false" {
		if typ == "string" {
			d = fmt.Sprintf("%q", d)
		}
		usage += fmt.Sprintf(" (default %s)", d)
	}
	fmt.Fprintln(w, strings.Join(wrap(usage, helpWidth-26), "\n"+strings.Repeat(" ", 26)))
}

// helpWidth is the terminal width help text is wrapped to.
const helpWidth = 100

// wrap splits s into lines of at most width runes at spaces (a longer
// word gets a line of its own).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}
