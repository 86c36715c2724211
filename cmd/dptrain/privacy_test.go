package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/accountant"
)

func TestPrivacyRDPJSON(t *testing.T) {
	tests := []struct {
		args     []string
		eps, tol float64 // relative tolerance
		order    float64
		relation string
	}{
		// Opacus' published value (signed series; order 3.9 is on both grids).
		{[]string{"--q", "0.04", "--sigma", "1.5", "--steps", "2250", "--delta", "1e-5", "--signed"}, 7.32911117143, 1e-10, 3.9, "add-remove"},
		// TF Privacy's MNIST value: the optimum order 19 is on both grids.
		{[]string{"--q", "0.0025", "--sigma=1.3", "--steps", "6000", "--delta", "1e-5", "--accountant", "rdp"}, 0.7242234026109595, 1e-10, 19, "add-remove"},
	}
	for _, tc := range tests {
		code, stdout, stderr := runCLI(t, append(append([]string{"privacy"}, tc.args...), "--json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr)
		}
		var got struct {
			Accountant string
			Epsilon    float64
			Delta      float64
			Order      float64
			Relation   string
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("%v: %v in %q", tc.args, err, stdout)
		}
		if strings.Count(stdout, "\n") != 1 {
			t.Errorf("%v: output is not one line: %q", tc.args, stdout)
		}
		if math.Abs(got.Epsilon-tc.eps) > tc.tol*tc.eps || got.Order != tc.order || got.Relation != tc.relation ||
			got.Accountant != "rdp" || got.Delta != 1e-5 {
			t.Errorf("%v: got %+v, want eps %v order %v %s", tc.args, got, tc.eps, tc.order, tc.relation)
		}
	}
}

func TestPrivacySamplingModes(t *testing.T) {
	eps := func(args ...string) (float64, string) {
		code, stdout, stderr := runCLI(t, append([]string{"privacy", "--json", "--q", "0.01", "--sigma", "2", "--steps", "500", "--delta", "1e-5"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatal(err)
		}
		return r["epsilon"].(float64), r["relation"].(string)
	}
	poisson, rel := eps()
	if rel != "add-remove" {
		t.Errorf("poisson relation %s", rel)
	}
	wor, rel := eps("--sampling", "wor", "--n", "10000")
	if rel != "replace-one" {
		t.Errorf("wor relation %s", rel)
	}
	// 500 steps of batches of 100 out of 10000: 5 epochs begun, each one
	// Gaussian of noise multiplier σ/2 = 1 (replace-one sensitivity 2C).
	shuffle, rel := eps("--sampling", "shuffle", "--n", "10000")
	if rel != "replace-one" {
		t.Errorf("shuffle relation %s", rel)
	}
	code, stdout, _ := runCLI(t, "privacy", "--json", "--q", "1", "--sigma", "1", "--steps", "5", "--delta", "1e-5")
	if code != 0 {
		t.Fatal(stdout)
	}
	var five map[string]any
	_ = json.Unmarshal([]byte(stdout), &five)
	if math.Abs(shuffle-five["epsilon"].(float64)) > 1e-12 {
		t.Errorf("shuffle eps %v, want 5 unsampled Gaussians of sigma 1: %v", shuffle, five["epsilon"])
	}
	t.Logf("poisson %.4g, wor %.4g, shuffle %.4g", poisson, wor, shuffle)
	if !(poisson < wor && wor < shuffle) {
		t.Errorf("expected poisson < wor < shuffle, got %v %v %v", poisson, wor, shuffle)
	}
}

func TestPrivacyReadable(t *testing.T) {
	code, stdout, _ := runCLI(t, "privacy", "--q", "0.04", "--sigma", "1.5", "--steps", "2250", "--delta", "1e-5")
	if code != 0 || !strings.Contains(stdout, "epsilon = 7.3293") || !strings.Contains(stdout, "order 3.9") ||
		!strings.Contains(stdout, "add-remove") || strings.Count(stdout, "\n") != 1 {
		t.Errorf("exit %d, output %q", code, stdout)
	}
}

func TestPrivacyBadInput(t *testing.T) {
	base := map[string]string{"q": "0.01", "sigma": "1", "steps": "100", "delta": "1e-5"}
	tests := []struct {
		set  map[string]string
		drop string
		want string // must appear in the one-line error
	}{
		{map[string]string{"q": "0"}, "", "--q must be in (0,1], got 0"},
		{map[string]string{"q": "1.5"}, "", "got 1.5"},
		{map[string]string{"q": "NaN"}, "", "--q must be a finite number, got NaN"},
		{map[string]string{"sigma": "0"}, "", "--sigma must be > 0, got 0"},
		{map[string]string{"sigma": "-2"}, "", "got -2"},
		{map[string]string{"sigma": "Inf"}, "", "--sigma must be a finite number"},
		{map[string]string{"delta": "0"}, "", "--delta must be in (0,1), got 0"},
		{map[string]string{"delta": "1"}, "", "got 1"},
		{map[string]string{"delta": "nan"}, "", "--delta must be a finite number"},
		{map[string]string{"steps": "0"}, "", "--steps must be >= 1, got 0"},
		{map[string]string{"steps": "1.5"}, "", "1.5"},
		{nil, "q", "--q is required"},
		{nil, "delta", "--delta is required"},
		{map[string]string{"sampling": "bogus"}, "", `got "bogus"`},
		{map[string]string{"sampling": "shuffle"}, "", "--n (dataset size) must be >= 1"},
		{map[string]string{"sampling": "wor", "n": "10", "q": "0.01"}, "", "batch size 0"},
		{map[string]string{"accountant": "nosuch"}, "", `unknown --accountant "nosuch" (known: `},
	}
	for _, tc := range tests {
		args := []string{"privacy"}
		for k, v := range base {
			if k == tc.drop {
				continue
			}
			if s, ok := tc.set[k]; ok {
				v = s
			}
			args = append(args, "--"+k, v)
		}
		for k, v := range tc.set {
			if _, ok := base[k]; !ok {
				args = append(args, "--"+k, v)
			}
		}
		code, stdout, stderr := runCLI(t, args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want %q)", args, code, stdout, stderr, tc.want)
		}
		if strings.Contains(tc.want, "must") && strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: error is not one line: %q", args, stderr)
		}
	}
}

// TestPrivacyDispatch checks the --accountant pre-scan in all its forms.
func TestPrivacyDispatch(t *testing.T) {
	var gotArgs []string
	table := privacyHandlers()
	table["test-fake"] = func(_ context.Context, args []string, stdout, _ io.Writer) error {
		gotArgs = args
		_, err := io.WriteString(stdout, "fake\n")
		return err
	}
	for _, args := range [][]string{
		{"--accountant", "test-fake", "--q", "1"},
		{"--q", "1", "--accountant=test-fake"},
		{"-accountant", "test-fake"},
		{"-accountant=test-fake"},
		{"--accountant", "rdp", "--accountant", "test-fake"},
	} {
		gotArgs = nil
		var stdout bytes.Buffer
		err := dispatchPrivacy(context.Background(), table, args, &stdout, io.Discard)
		if err != nil || stdout.String() != "fake\n" || len(gotArgs) != len(args) {
			t.Errorf("%v: error %v stdout %q handler args %v", args, err, stdout.String(), gotArgs)
		}
	}
	code, _, stderr := runCLI(t, "privacy", "--accountant")
	if code != 2 || !strings.Contains(stderr, "--accountant") {
		t.Errorf("missing value: exit %d %q", code, stderr)
	}
	// After "--" nothing is a flag.
	if name, err := scanAccountant([]string{"--", "--accountant", "x"}); err != nil || name != "rdp" {
		t.Errorf("after --: %q %v", name, err)
	}
}

func TestWritePrivacyResult(t *testing.T) {
	var sb strings.Builder
	b := accountant.Bound{Accountant: "hidden", Epsilon: math.Inf(1), Delta: 1e-5, Relation: accountant.ReplaceOne}
	if err := writePrivacyResult(&sb, true, b, map[string]any{"steps": 3, "radius": 2.5}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(sb.String()), &got); err != nil {
		t.Fatalf("%v: %q", err, sb.String())
	}
	if got["epsilon"] != "+Inf" || got["steps"] != 3.0 || got["radius"] != 2.5 || got["relation"] != "replace-one" {
		t.Errorf("got %v", got)
	}
	if _, ok := got["order"]; ok {
		t.Errorf("order written for a non-RDP bound: %v", got)
	}
}

func FuzzScanAccountant(f *testing.F) {
	f.Add("--accountant\x00twice\x00--q\x001")
	f.Add("--accountant=hidden")
	f.Add("-accountant\x00")
	f.Add("--\x00--accountant\x00x")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		name, err := scanAccountant(args)
		if err != nil {
			return
		}
		// The scanned name must be what the flag package would see.
		fs := newFlagSet("fuzz", io.Discard)
		acc := fs.String("accountant", "rdp", "")
		fs.SetOutput(io.Discard)
		for _, a := range args {
			if strings.HasPrefix(a, "-") && a != "-" && a != "--" && !strings.HasPrefix(strings.TrimLeft(a, "-"), "accountant") {
				return // other flags: the flag package would fail on unknown ones
			}
		}
		if fs.Parse(args) == nil && fs.NArg() == 0 && *acc != name {
			t.Fatalf("args %q: scanned %q, flag package %q", args, name, *acc)
		}
	})
}

// The warnings of privacyWarnings, on the CLI: δ ≥ 1/n and an RDP optimum
// at either edge of the order grid; none for an ordinary query.
func TestPrivacyWarnings(t *testing.T) {
	tests := []struct {
		args []string
		want []string // substrings of stderr; nil: stderr empty
	}{
		{[]string{"--q", "0.01", "--sigma", "1", "--steps", "1000", "--delta", "1e-5", "--n", "60000"}, nil},
		{[]string{"--q", "0.01", "--sigma", "1", "--steps", "1000", "--delta", "1e-3", "--n", "1000"}, []string{"δ = 0.001 is at least 1/n = 0.001"}},
		{[]string{"--q", "0.001", "--sigma", "50", "--steps", "10", "--delta", "1e-5"}, []string{"order, 1024, is at the edge"}},
		{[]string{"--q", "1", "--sigma", "0.1", "--steps", "100", "--delta", "1e-5"}, []string{"order, 1.1, is at the edge"}},
		{[]string{"--accountant", "pld", "--q", "0.01", "--sigma", "1", "--steps", "10", "--delta", "0.1", "--n", "20"}, []string{"δ = 0.1 is at least 1/n = 0.05"}},
	}
	for _, tc := range tests {
		code, out, errOut := runCLI(t, append([]string{"privacy"}, tc.args...)...)
		if code != 0 || !strings.Contains(out, "epsilon = ") {
			t.Errorf("%v: exit %d, stdout %q", tc.args, code, out)
			continue
		}
		if tc.want == nil && errOut != "" {
			t.Errorf("%v: unexpected stderr %q", tc.args, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, "warning: ") || !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, errOut, w)
			}
		}
		if strings.Contains(out, "warnings=") {
			t.Errorf("%v: warnings repeated on stdout: %q", tc.args, out)
		}
	}
}

// The one handler table names every accountant `dptrain privacy` documents,
// and each entry answers -h with its own flags.
func TestPrivacyHandlerTable(t *testing.T) {
	want := []string{"hidden", "pld", "rdp", "srdp", "twice"}
	if got := knownAccountants(); !slices.Equal(got, want) {
		t.Fatalf("handlers %v, want %v", got, want)
	}
	for _, n := range want {
		var out bytes.Buffer
		err := privacyHandlers()[n](context.Background(), []string{"-h"}, &out, io.Discard)
		if !errors.Is(err, errHelp) || !strings.Contains(out.String(), "-sigma") {
			t.Errorf("%s -h: %v, output %q", n, err, out.String())
		}
	}
}
