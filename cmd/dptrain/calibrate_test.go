package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestCalibrateJSON: Opacus' published calibration (ε = 8, δ = 1e−5,
// q = 0.04): σ = 1.416 ± 0.001 for 2250 steps, 1.3562 for 2000.
func TestCalibrateJSON(t *testing.T) {
	tests := []struct {
		steps      string
		sigma, tol float64
	}{
		{"2250", 1.416, 1e-3},
		{"2000", 1.3562, 2e-4},
	}
	for _, tc := range tests {
		for _, signed := range []bool{false, true} {
			args := []string{"calibrate", "--epsilon", "8", "--delta", "1e-5", "--q", "0.04", "--steps", tc.steps, "--json"}
			if signed {
				args = append(args, "--signed")
			}
			code, stdout, stderr := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
			var got struct{ Sigma, Epsilon float64 }
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("%v: %v in %q", args, err, stdout)
			}
			if math.Abs(got.Sigma-tc.sigma) > tc.tol || got.Epsilon > 8 || got.Epsilon < 8-1e-3 {
				t.Errorf("%v: sigma %v (eps %v), want %v ± %v with eps in [8-1e-3, 8]", args, got.Sigma, got.Epsilon, tc.sigma, tc.tol)
			}
			// The printed σ meets the target when fed back to `privacy`.
			back := []string{"privacy", "--json", "--q", "0.04", "--steps", tc.steps, "--delta", "1e-5",
				"--sigma", strings.TrimSpace(jsonField(t, stdout, "sigma"))}
			if signed {
				back = append(back, "--signed")
			}
			code, stdout, _ = runCLI(t, back...)
			if code != 0 || jsonFloat(t, stdout, "epsilon") > 8 {
				t.Errorf("privacy at the calibrated sigma: %s", stdout)
			}
		}
	}
}

func jsonField(t *testing.T, s, key string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%v: %q", err, s)
	}
	return string(m[key])
}

func jsonFloat(t *testing.T, s, key string) float64 {
	t.Helper()
	var v float64
	if err := json.Unmarshal([]byte(jsonField(t, s, key)), &v); err != nil {
		t.Fatalf("%s in %q: %v", key, s, err)
	}
	return v
}

func TestCalibrateBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--epsilon", "0", "--delta", "1e-5", "--q", "0.01", "--steps", "10"}, "--epsilon must be > 0, got 0"},
		{[]string{"--epsilon", "NaN", "--delta", "1e-5", "--q", "0.01", "--steps", "10"}, "--epsilon must be a finite number, got NaN"},
		{[]string{"--epsilon", "1", "--delta", "2", "--q", "0.01", "--steps", "10"}, "--delta must be in (0,1), got 2"},
		{[]string{"--epsilon", "1", "--delta", "1e-5", "--q", "-0.1", "--steps", "10"}, "--q must be in (0,1], got -0.1"},
		{[]string{"--epsilon", "1", "--delta", "1e-5", "--q", "0.01", "--steps", "0"}, "--steps must be >= 1, got 0"},
		{[]string{"--epsilon", "1", "--delta", "1e-5", "--q", "0.01"}, "--steps is required"},
		{[]string{"--epsilon", "1", "--delta", "1e-5", "--q", "0.01", "--steps", "5", "--tolerance", "0"}, "--tolerance must be > 0"},
	}
	for _, tc := range tests {
		code, stdout, stderr := runCLI(t, append([]string{"calibrate"}, tc.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d stdout %q stderr %q (want %q)", tc.args, code, stdout, stderr, tc.want)
		}
	}
	// Unreachable target: an error, not a wrong number.
	code, stdout, stderr := runCLI(t, "calibrate", "--epsilon", "1e-9", "--delta", "1e-12", "--q", "1", "--steps", "10")
	if code == 0 || stdout != "" {
		t.Errorf("unreachable target: exit %d %q %q", code, stdout, stderr)
	}
}
