package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
)

func papersJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	code, out, errOut := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: output %q is not one JSON object: %v", args, out, err)
	}
	return m
}

func TestPrivacyHiddenCLI(t *testing.T) {
	// Paper 002 Fig. 3: ε* = 3.6474545 (T large), eq. 23 = 4.6188940.
	m := papersJSON(t, "privacy", "--accountant", "hidden", "--q", "0.001", "--sigma", "1", "--clip", "2",
		"--lr", "0.01", "--diameter", "3", "--steps", "1000", "--delta", "1e-3", "--json")
	if e := m["epsilon"].(float64); math.Abs(e-3.6474545) > 1e-7 {
		t.Errorf("epsilon = %v", e)
	}
	if e := m["epsilon_closed_form"].(float64); math.Abs(e-4.6188940) > 1e-7 {
		t.Errorf("closed form = %v", e)
	}
	if m["relation"] != "replace-one" || m["accountant"] != "hidden" {
		t.Errorf("output %v", m)
	}
	// T = 2 (TV3 of docs/hidden-state.md#test-vectors).
	m = papersJSON(t, "privacy", "--accountant=hidden", "--q", "0.001", "--sigma", "1", "--clip", "2",
		"--lr", "0.01", "--diameter", "3", "--steps", "2", "--delta", "1e-3", "--json")
	if e := m["epsilon"].(float64); math.Abs(e-2.6896403974154297) > 1e-7 {
		t.Errorf("T=2 epsilon = %v", e)
	}
}

func TestPrivacyTwiceCLI(t *testing.T) {
	// docs/twice-sampling.md#test-vectors spot check: ε = 8.000 at α = 4 with
	// Lemma 2.3.
	m := papersJSON(t, "privacy", "--accountant", "twice", "--q", "0.04", "--q2", "0.5", "--sigma", "1.05161",
		"--d0", "100", "--steps", "5000", "--delta", "1e-5", "--conversion", "paper", "--json")
	if e := m["epsilon"].(float64); math.Abs(e-8) > 5e-4 || m["order"].(float64) != 4 {
		t.Errorf("paper conversion: %v", m)
	}
	if b := m["input_wise_epsilon"].(float64); !(b > 8) {
		t.Errorf("input-wise baseline %v should be worse", b)
	}
	m = papersJSON(t, "privacy", "--accountant", "twice", "--q", "0.04", "--q2", "0.5", "--sigma", "1.05161",
		"--d0", "100", "--steps", "5000", "--delta", "1e-5", "--json")
	want, _, _ := accountant.TwiceEpsilon(accountant.NewTwiceSampled(0.04, 0.5, 1.05161, 100), 5000, 1e-5, 256, accountant.TwiceBalle)
	if e := m["epsilon"].(float64); e != want || !(e < 8) {
		t.Errorf("default conversion: %v want %v", e, want)
	}
}

func TestPrivacySRDPCLI(t *testing.T) {
	m := papersJSON(t, "privacy", "--accountant", "srdp", "--q", "0.01", "--sigma", "1", "--steps", "100",
		"--delta", "1e-5", "--delta2", "0.001", "--deltainf", "5", "--mu", "1", "--json")
	acc := accountant.NewSRDP()
	ev := accountant.Preprocessed{Delta2: 0.001, DeltaInf: 5, Mu: 1, Event: accountant.PoissonSampled{Q: 0.01, Event: accountant.Gaussian{Sigma: 1}}}
	if err := acc.Compose(ev, 100); err != nil {
		t.Fatal(err)
	}
	b, _ := acc.Epsilon(1e-5)
	if e := m["epsilon"].(float64); e != b.Epsilon || !(e > m["epsilon_without_preprocessing"].(float64)) {
		t.Errorf("srdp output %v, want epsilon %v", m, b.Epsilon)
	}
	if tau := m["tau"].(float64); math.Abs(tau-0.005) > 1e-15 {
		t.Errorf("tau %v", tau)
	}
}

func TestPrivacyPapersCLIRefusesBadInput(t *testing.T) {
	hidden := []string{"privacy", "--accountant", "hidden", "--q", "0.01", "--sigma", "1", "--clip", "1", "--lr", "0.1", "--diameter", "2", "--steps", "10", "--delta", "1e-5"}
	twice := []string{"privacy", "--accountant", "twice", "--q", "0.04", "--q2", "0.5", "--sigma", "1", "--d0", "100", "--steps", "10", "--delta", "1e-5"}
	srdp := []string{"privacy", "--accountant", "srdp", "--q", "0.01", "--sigma", "1", "--steps", "10", "--delta", "1e-5", "--delta2", "0.1", "--deltainf", "2"}
	with := func(base []string, flag, val string) []string {
		out := append([]string(nil), base...)
		for i := range out {
			if out[i] == flag {
				out[i+1] = val
				return out
			}
		}
		return append(out, flag, val)
	}
	without := func(base []string, flag string) []string {
		var out []string
		for i := 0; i < len(base); i++ {
			if base[i] == flag {
				i++
				continue
			}
			out = append(out, base[i])
		}
		return out
	}
	tests := []struct {
		args []string
		want string
	}{
		{with(hidden, "--q", "0"), "--q"},
		{with(hidden, "--q", "1.5"), "--q"},
		{with(hidden, "--sigma", "0"), "--sigma"},
		{with(hidden, "--sigma", "NaN"), "--sigma"},
		{with(hidden, "--delta", "1"), "--delta"},
		{with(hidden, "--clip", "-1"), "--clip"},
		{with(hidden, "--diameter", "Inf"), "--diameter"},
		{with(hidden, "--steps", "0"), "--steps"},
		{without(hidden, "--delta"), "--delta"},
		{without(hidden, "--clip"), "--clip"},
		{with(twice, "--q2", "0"), "--q2"},
		{with(twice, "--d0", "0.5"), "--d0"},
		{with(twice, "--conversion", "fast"), "--conversion"},
		{with(twice, "--alpha-max", "1"), "--alpha-max"},
		{without(twice, "--d0"), "--d0"},
		{with(srdp, "--delta2", "-0.1"), "--delta2"},
		{with(srdp, "--deltainf", "NaN"), "--deltainf"},
		{with(srdp, "--mu", "-1"), "--mu"},
		{with(srdp, "--q", "2"), "--q"},
		// A missing flag is named as missing, not as a NaN placeholder.
		{without(hidden, "--q"), "--q is required"},
		{without(hidden, "--lr"), "--lr is required"},
		{without(twice, "--sigma"), "--sigma is required"},
		{without(twice, "--q2"), "--q2 is required"},
		{without(srdp, "--steps"), "--steps is required"},
		{without(srdp, "--deltainf"), "--deltainf is required"},
	}
	for _, tc := range tests {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want one line naming %s)", tc.args[2:], code, out, errOut, tc.want)
		}
	}
	if code, _, _ := runCLI(t, with(hidden, "--bogus", "1")...); code != 2 {
		t.Errorf("unknown flag: exit %d", code)
	}
}

// FuzzPrivacyPapersArgs: whatever the arguments, the handlers never panic and
// either succeed with one JSON object or fail with exit code 1 or 2.
func FuzzPrivacyPapersArgs(f *testing.F) {
	f.Add("hidden", "0.001", "1", "3", "1000", "1e-3", "100")
	f.Add("twice", "0.04", "0.5", "1.05", "5000", "1e-5", "100")
	f.Add("srdp", "0.01", "1", "0.1", "100", "1e-5", "2")
	f.Add("twice", "1", "1", "1e-300", "1", "0.5", "1")
	f.Add("hidden", "1", "1e-300", "1e300", "2147483647", "1e-300", "-0")
	f.Fuzz(func(t *testing.T, acc, q, sigma, x, steps, delta, y string) {
		args := []string{"privacy", "--accountant", acc, "--q", q, "--sigma", sigma, "--steps", steps, "--delta", delta, "--json"}
		switch acc {
		case "hidden":
			args = append(args, "--clip", x, "--lr", "0.01", "--diameter", y)
		case "twice":
			args = append(args, "--q2", x, "--d0", y, "--alpha-max", "64")
		case "srdp":
			args = append(args, "--delta2", x, "--deltainf", y)
		}
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		switch code {
		case 0:
			var m map[string]any
			if err := json.Unmarshal(out.Bytes(), &m); err != nil {
				t.Fatalf("%v: bad JSON %q", args, out.String())
			}
		case 1, 2:
		default:
			t.Fatalf("%v: exit %d", args, code)
		}
	})
}
