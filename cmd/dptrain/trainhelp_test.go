package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/trainer"
)

// Every train flag sits in exactly one help group, and no group names a
// flag that does not exist (a renamed flag would vanish from --help).
func TestTrainHelpGroups(t *testing.T) {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	c := trainer.Default()
	trainFlags(fs, &c)
	for _, n := range []string{"config", "resume", "overwrite", "quiet", "json", "rank-timeout"} {
		fs.Bool(n, false, "")
	}
	seen := map[string]string{}
	for _, g := range trainGroups {
		for _, n := range g.flags {
			if prev, dup := seen[n]; dup {
				t.Errorf("--%s is in groups %q and %q", n, prev, g.title)
			}
			seen[n] = g.title
			if fs.Lookup(n) == nil {
				t.Errorf("group %q names --%s, which train does not define", g.title, n)
			}
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := seen[f.Name]; !ok {
			t.Errorf("--%s is in no help group", f.Name)
		}
	})
}

// train --help goes to stdout, in groups, with defaults, in lines a
// terminal shows whole, and without references to files a clone lacks.
func TestTrainHelpLayout(t *testing.T) {
	code, out, errOut := runCLI(t, "train", "--help")
	if code != 0 || errOut != "" {
		t.Fatalf("train --help: exit %d, stderr %q", code, errOut)
	}
	last := -1
	for _, g := range trainGroups {
		i := strings.Index(out, "\n"+g.title+":\n")
		if i < last {
			t.Errorf("group %q missing or out of order", g.title)
		}
		last = i
	}
	for _, want := range []string{
		"--hidden widths", "(default 256: one hidden layer)",
		`--model string          logreg`, `(default "cnn")`, "--delta float           δ (default 1e-05)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("train --help lacks %q", want)
		}
	}
	for _, bad := range []string{"paper 00", "specs/", "Usage of"} {
		if strings.Contains(out, bad) {
			t.Errorf("train --help mentions %q", bad)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > helpWidth {
			t.Errorf("help line of %d runes: %q", n, line)
		}
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		in    string
		width int
		want  []string
	}{
		{"a bb ccc", 4, []string{"a bb", "ccc"}},
		{"a bb ccc", 8, []string{"a bb ccc"}},
		{"averyverylongword x", 5, []string{"averyverylongword", "x"}},
		{"ε ≤ δ", 3, []string{"ε ≤", "δ"}},
	}
	for _, tc := range tests {
		got := wrap(tc.in, tc.width)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

// sweep --help lists its own flags first, then train's groups.
func TestSweepHelpGrouped(t *testing.T) {
	code, out, _ := runCLI(t, "sweep", "--help")
	i, j := strings.Index(out, "\nThis command:\n  --grid value"), strings.Index(out, "\nPrivacy:\n")
	if code != 0 || i < 0 || j < i || strings.Contains(out, "--resume") {
		t.Errorf("sweep --help: exit %d, groups at %d, %d:\n%s", code, i, j, out)
	}
}
