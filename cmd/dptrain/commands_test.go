package main

import (
	"regexp"
	"strings"
	"testing"
)

// The table names each command once, and 'dptrain help' lists them all,
// in the table's order.
func TestCommandTable(t *testing.T) {
	table := commandTable()
	want := []string{"train", "sweep", "eval", "predict", "export", "privacy", "calibrate", "audit", "report",
		"bench", "data", "help", "version"}
	if len(table) != len(want) {
		t.Fatalf("%d commands, want %d", len(table), len(want))
	}
	code, out, _ := runCLI(t, "help")
	if code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	last := -1
	for i, c := range table {
		if c.name != want[i] || c.summary == "" || c.run == nil {
			t.Errorf("command %d: %q (summary %q, run %v), want %q with a summary and a run", i, c.name, c.summary, c.run != nil, want[i])
		}
		if lookupCommand(c.name) != nil && lookupCommand(c.name).name != c.name {
			t.Errorf("lookupCommand(%q) finds another command", c.name)
		}
		line := "\n  " + c.name + strings.Repeat(" ", max(1, 11-len(c.name))) + c.summary + "\n"
		at := strings.Index(out, line)
		if at < 0 {
			t.Errorf("help does not list %q as %q", c.name, line)
		} else if at < last {
			t.Errorf("help lists %q out of the table's order", c.name)
		}
		last = at
	}
}

// 'dptrain help CMD' prints CMD's help (as 'dptrain CMD --help' does) and
// exits 0; every command's help writes its flags as --flag.
func TestHelpCommand(t *testing.T) {
	singleDash := regexp.MustCompile(`(?m)^\s+-[a-z]`)
	for _, c := range commandTable() {
		code, out, errb := runCLI(t, "help", c.name)
		if code != 0 {
			t.Errorf("help %s: exit %d, stderr %q", c.name, code, errb)
			continue
		}
		switch c.name {
		case "help":
			if !strings.HasPrefix(out, "usage: dptrain <command>") {
				t.Errorf("help help: %q", out)
			}
			continue
		case "version":
			if out != "usage: dptrain version\n\nthe version and VCS commit of this binary\n" {
				t.Errorf("help version: %q", out)
			}
			continue
		}
		if !strings.Contains(out, "usage:") || !strings.Contains(out, "dptrain "+c.name) {
			t.Errorf("help %s does not start with its usage: %q", c.name, out)
		}
		if strings.Contains(out, "Usage of") || singleDash.MatchString(out) {
			t.Errorf("help %s lists a flag as -flag:\n%s", c.name, out)
		}
		if c.name != "data" && !strings.Contains(out, "\n  --") {
			t.Errorf("help %s lists no --flags:\n%s", c.name, out)
		}
		_, direct, _ := runCLI(t, c.name, "--help")
		if direct != out {
			t.Errorf("help %s differs from %s --help", c.name, c.name)
		}
	}
	code, out, _ := runCLI(t, "help", "train")
	for _, want := range []string{"usage: dptrain train [flags]", "\nData:\n", "--model string          logreg", "--epsilon float"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("help train: exit %d, lacks %q", code, want)
		}
	}
	code, out, _ = runCLI(t, "help", "calibrate")
	for _, want := range []string{"usage: dptrain calibrate [flags]\n\nnoise multiplier for a target", "\nFlags:\n  --accountant string ", "--steps int "} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("help calibrate: exit %d, lacks %q:\n%s", code, want, out)
		}
	}
	code, out, _ = runCLI(t, "help", "data", "list")
	if code != 0 || !strings.Contains(out, "usage: dptrain data list [flags]") || !strings.Contains(out, "--data string") {
		t.Errorf("help data list: exit %d, %q", code, out)
	}
}

// Unknown commands exit 2 with the nearest name; the help and version
// spellings keep working.
func TestDispatchNames(t *testing.T) {
	tests := []struct {
		args []string
		code int
		out  string // in stdout (code 0) or stderr
	}{
		{[]string{"trian"}, 2, `unknown command "trian" (did you mean train?)`},
		{[]string{"help", "calibrat"}, 2, `dptrain help: unknown command "calibrat" (did you mean calibrate?)`},
		{[]string{"help", "zzzzzzzz"}, 2, `unknown command "zzzzzzzz"`},
		{[]string{"zzzzzzzz"}, 2, "usage: dptrain <command>"},
		{[]string{"--help"}, 0, "usage: dptrain <command>"},
		{[]string{"-h"}, 0, "  calibrate  noise multiplier"},
		{[]string{"help"}, 0, "  train      train a model"},
		{[]string{"--version"}, 0, "dptrain "},
		{[]string{"-version"}, 0, "dptrain "},
		{[]string{"version"}, 0, "dptrain "},
		{[]string{"version", "x"}, 2, "version takes no arguments"},
		{[]string{"calibrate", "--epsilon", "1", "--delta", "1e-5", "--q", "0.01", "--steps", "1000"}, 0, "sigma"},
		{[]string{"train", "--model", "vit"}, 2, `model "vit" is not one of logreg, linreg, mlp, cnn, resnet20, resnet22, scatcnn`},
		{[]string{"train", "--optimizer", "lbfgs"}, 2, `optimizer "lbfgs" is not one of sgd, momentum, adam`},
	}
	for _, tc := range tests {
		code, out, errb := runCLI(t, tc.args...)
		where := errb
		if code == 0 {
			where = out
		}
		if code != tc.code || !strings.Contains(where, tc.out) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d with %q", tc.args, code, out, errb, tc.code, tc.out)
		}
	}
}
