package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// privacy --accountant pld reproduces dp_accounting's PLD value for the
// README's run (issue 19's "done when" command); calibrate --accountant pld
// returns a smaller σ than RDP for the same target; bad input exits 2.
func TestPrivacyAndCalibratePLD(t *testing.T) {
	code, out, errs := runCLI(t, "privacy", "--accountant", "pld", "--q", "0.034133333", "--sigma", "2.15", "--steps", "1172", "--delta", "1e-5", "--json")
	var r struct {
		Epsilon  float64 `json:"epsilon"`
		Relation string  `json:"relation"`
		Sigma    float64 `json:"sigma"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	if math.Abs(r.Epsilon-2.3895214619) > 0.005*2.3895214619 || r.Relation != "add-remove" {
		t.Errorf("pld ε = %v (%s), want ≈ 2.3895", r.Epsilon, r.Relation)
	}
	sigmas := map[string]float64{}
	for _, acc := range []string{"rdp", "pld"} {
		code, out, errs := runCLI(t, "calibrate", "--accountant", acc, "--epsilon", "3", "--delta", "1e-5", "--q", "0.034133333", "--steps", "1172", "--json")
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Epsilon > 3 || r.Epsilon < 2.999 {
			t.Fatalf("calibrate %s: exit %d: %s %s", acc, code, out, errs)
		}
		sigmas[acc] = r.Sigma
	}
	if !(sigmas["pld"] < sigmas["rdp"]) {
		t.Errorf("PLD σ %v not below RDP σ %v", sigmas["pld"], sigmas["rdp"])
	}
	for _, args := range [][]string{
		{"privacy", "--accountant", "pld", "--q", "1.5", "--sigma", "1", "--steps", "3", "--delta", "1e-5"},
		{"privacy", "--accountant", "pld", "--q", "0.1", "--sigma", "-1", "--steps", "3", "--delta", "1e-5"},
		{"privacy", "--accountant", "pld", "--q", "0.1", "--sigma", "1", "--steps", "3"},
		{"calibrate", "--accountant", "pld", "--epsilon", "3", "--delta", "2", "--q", "0.1", "--steps", "3"},
		{"calibrate", "--accountant", "nope", "--epsilon", "3", "--delta", "1e-5", "--q", "0.1", "--steps", "3"},
	} {
		code, _, errs := runCLI(t, args...)
		if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errs)
		}
	}
}

// A query the PLD cannot certify (δ below its mass at +∞) prints RDP's ε
// with the reason, never a PLD number; and the pld help section names
// privacy's default accountant, rdp.
func TestPrivacyPLDUncertifiedFallsBackToRDP(t *testing.T) {
	args := []string{"--q", "0.5", "--sigma", "0.5", "--steps", "10", "--delta", "1e-60"}
	code, out, errs := runCLI(t, append([]string{"privacy", "--accountant", "pld", "--interval", "0.01"}, args...)...)
	if code != 0 || !strings.HasPrefix(out, "rdp: epsilon = ") || !strings.Contains(errs, "cannot certify") || !strings.Contains(errs, "RDP accountant's") {
		t.Fatalf("exit %d: stdout %q stderr %q; want RDP's ε and the reason", code, out, errs)
	}
	_, rdpOut, _ := runCLI(t, append([]string{"privacy", "--accountant", "rdp"}, args...)...)
	if f, r := strings.Fields(out), strings.Fields(rdpOut); len(r) < 4 || f[3] != r[3] {
		t.Errorf("fallback %q, rdp %q", out, rdpOut)
	}
	_, help, helpErr := runCLI(t, "privacy", "--help")
	all := help + helpErr
	sections := 0
	for _, line := range strings.Split(all, "\n") {
		if strings.Contains(line, "--accountant string") {
			sections++
			if !strings.HasSuffix(strings.TrimSpace(line), `(default "rdp")`) {
				t.Errorf("privacy --help: %q does not name the default accountant, rdp", line)
			}
		}
	}
	if sections < 2 {
		t.Errorf("privacy --help shows %d accountant sections:\n%s", sections, all)
	}
}
