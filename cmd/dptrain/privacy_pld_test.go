package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestPrivacyPLD: the example (dp_accounting: 2.3895214619), the
// calibrated σ fed back, and bad input as one line with exit status 2.
func TestPrivacyPLD(t *testing.T) {
	code, stdout, stderr := runCLI(t, "privacy", "--accountant", "pld", "--q", "0.034133333", "--sigma", "2.15",
		"--steps", "1172", "--delta", "1e-5", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Accountant string
		Epsilon    float64
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v in %q", err, stdout)
	}
	if got.Accountant != "pld" || math.Abs(got.Epsilon/2.3895214619-1) > 1e-6 {
		t.Errorf("got %+v, want pld ε 2.3895214619", got)
	}

	code, stdout, stderr = runCLI(t, "calibrate", "--accountant", "pld", "--epsilon", "3", "--delta", "1e-5",
		"--q", "0.034133333", "--steps", "1172", "--json")
	if code != 0 {
		t.Fatalf("calibrate: exit %d: %s", code, stderr)
	}
	var cal struct{ Sigma, Epsilon float64 }
	if err := json.Unmarshal([]byte(stdout), &cal); err != nil {
		t.Fatalf("%v in %q", err, stdout)
	}
	if math.Abs(cal.Sigma-1.8086) > 2e-3 || cal.Epsilon > 3 || cal.Epsilon < 3-1e-3 {
		t.Errorf("calibrate: %+v, want σ ≈ 1.8086 with ε in [3-1e-3, 3]", cal)
	}
	sigma := strings.TrimSpace(jsonField(t, stdout, "sigma"))
	code, stdout, _ = runCLI(t, "privacy", "--accountant", "pld", "--q", "0.034133333", "--sigma", sigma,
		"--steps", "1172", "--delta", "1e-5", "--json")
	var back struct{ Epsilon float64 }
	if err := json.Unmarshal([]byte(stdout), &back); code != 0 || err != nil || back.Epsilon > 3 {
		t.Errorf("calibrated σ %s gives ε %v (%v)", sigma, back.Epsilon, err)
	}

	for _, args := range [][]string{
		{"privacy", "--accountant", "pld", "--q", "2", "--sigma", "1", "--steps", "3", "--delta", "1e-5"},
		{"privacy", "--accountant", "pld", "--q", "0.1", "--sigma", "0", "--steps", "3", "--delta", "1e-5"},
		{"privacy", "--accountant", "pld", "--q", "0.1", "--sigma", "1", "--steps", "3", "--delta", "1e-5", "--interval", "0"},
		{"privacy", "--accountant", "pld", "--q", "0.1", "--sigma", "1", "--delta", "1e-5"},
		{"calibrate", "--accountant", "pld", "--epsilon", "-1", "--delta", "1e-5", "--q", "0.1", "--steps", "3"},
		{"calibrate", "--accountant", "nope", "--epsilon", "1", "--delta", "1e-5", "--q", "0.1", "--steps", "3"},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q: want one line and exit 2", args, code, stderr)
		}
	}
}
