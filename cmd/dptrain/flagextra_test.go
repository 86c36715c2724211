package main

import (
	"flag"
	"io"
	"testing"
)

// TestSciIntExact: integer flags take scientific notation read exactly
// (the README's --steps 1e6), including values beyond float64's 2^53
// where every integer is no longer representable (1e18 once failed), and
// refuse fractions, overflow and absurd exponents without expanding them.
func TestSciIntExact(t *testing.T) {
	cases := []struct {
		in    string
		want  int64
		valid bool
	}{
		{"1e6", 1_000_000, true},
		{"1e18", 1_000_000_000_000_000_000, true},
		{"9.2e18", 9_200_000_000_000_000_000, true},
		{"123456789012345678e1", 1_234_567_890_123_456_780, true},
		{"2.5e1", 25, true},
		{"-3e2", -300, true},
		{"42", 42, true},
		{"1.5", 0, false},
		{"1e-3", 0, false},
		{"1e19", 0, false}, // beyond int64: the flag package refuses
		{"1e999999999", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"1/2", 0, false},
	}
	for _, c := range cases {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		n := fs.Int64("steps", 0, "")
		restore := acceptScientific(fs)
		err := fs.Parse([]string{"--steps", c.in})
		restore()
		if c.valid {
			if err != nil || *n != c.want {
				t.Errorf("%s: got %d, %v; want %d", c.in, *n, err, c.want)
			}
		} else if err == nil {
			t.Errorf("%s: accepted as %d", c.in, *n)
		}
	}
}
