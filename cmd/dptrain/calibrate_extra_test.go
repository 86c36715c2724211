package main

import (
	"strings"
	"testing"
)

func TestCalibrateFromEpochsAndLimits(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		code      int
		out, warn string
	}{
		// q = 256/60000, steps = ceil(10·60000/256) = 2344.
		{[]string{"--epsilon", "3", "--delta", "1e-5", "--n", "60000", "--batch", "256", "--epochs", "10"}, 0, "q = 0.004266666667, 2344 steps", ""},
		{[]string{"--epsilon", "3", "--delta", "5e-3", "--n", "500", "--batch", "50", "--epochs", "1"}, 0, "10 steps", "delta = 0.005 >= 1/n = 0.002"},
		// ε(σ) jumps from 0.0035 to 0 (the total-variation bound): the
		// smallest σ meeting the target, with a warning naming the jump.
		{[]string{"--epsilon", "1e-6", "--delta", "1e-5", "--q", "0.01", "--steps", "1000"}, 0, "sigma = 31618.2", "jumps from 0.0035"},
		{[]string{"--epsilon", "0.01", "--delta", "1e-5", "--q", "0.01", "--steps", "1000"}, 0, "epsilon = 0.00999", "edge of the order grid"},
		{[]string{"--epsilon", "3", "--delta", "1e-5", "--n", "100", "--batch", "200", "--epochs", "1"}, 2, "", "--batch <= --n"},
		// The PLD's grid certifies no σ at ε = 1e-6: the RDP σ, whose
		// PLD ε is above the target, with a warning that RDP certifies it
		// (issue 32 item 3; before, no warning).
		{[]string{"--epsilon", "1e-6", "--delta", "1e-5", "--q", "0.001", "--steps", "100", "--accountant", "pld"}, 0, "pld: epsilon = 7.8676", "above the target 1e-06: its loss grid certifies no sigma here; the sigma printed meets the target by the RDP accountant (epsilon = 0)"},
		// The smallest σ on the PLD's default grid, within 0.2% (before:
		// 2.4016, 3% above it, with a below-tolerance warning).
		{[]string{"--epsilon", "0.5", "--delta", "1e-8", "--q", "0.001", "--steps", "50000", "--accountant", "pld"}, 0, "sigma = 2.3322", ""},
	} {
		code, out, errb := runCLI(t, append([]string{"calibrate"}, tc.args...)...)
		if tc.warn == "" && errb != "" {
			t.Errorf("%v: unexpected stderr %q", tc.args, errb)
		}
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errb, tc.warn) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, out, errb, tc.code, tc.out, tc.warn)
		}
	}
}
