package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The exit codes README documents: 0 ok, 1 runtime fault, 2 bad input,
// 130 interrupted.
func TestConventions(t *testing.T) {
	outDir := filepath.Join(t.TempDir(), "run")
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stdout (code 0) or stderr
	}{
		{"version", []string{"--version"}, 0, "dptrain "},
		{"command typo", []string{"trian"}, 2, "did you mean train?"},
		{"flag typo", []string{"privacy", "--q", "0.01", "--sigma", "1", "--stesp", "10", "--delta", "1e-5"}, 2, "did you mean --steps?"},
		{"scientific int", []string{"privacy", "--q", "0.01", "--sigma", "1", "--steps", "1e3", "--delta", "1e-5"}, 0, "steps=1000"},
		{"batch above n", []string{"train", "--train-limit", "100", "--model", "logreg", "--plots=false", "--out", outDir}, 2, "batch_size 512 exceeds the 100 training examples; use --batch 100 or less"},
		{"fractional int", []string{"privacy", "--q", "0.01", "--sigma", "1", "--steps", "1.5", "--delta", "1e-5"}, 2, `invalid value "1.5"`},
	} {
		code, out, errb := runCLI(t, tc.args...)
		where := errb
		if code == 0 {
			where = out
		}
		if code != tc.code || !strings.Contains(where, tc.out) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d with %q", tc.name, code, out, errb, tc.code, tc.out)
		}
	}
}

func TestInterruptedExits130(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"train", "--model", "logreg", "--epochs", "1", "--seed", "1", "--out", filepath.Join(t.TempDir(), "run")}, &out, &errb)
	if code != 130 {
		t.Fatalf("cancelled train: exit %d (%s), want 130", code, errb.String())
	}
}

func TestPrivacyHelpListsEveryAccountant(t *testing.T) {
	code, errb, _ := runCLI(t, "privacy", "--help")
	if code != 0 {
		t.Fatalf("privacy --help: exit %d", code)
	}
	for _, want := range []string{"== --accountant rdp ==", "== --accountant pld ==", "== --accountant hidden ==", "-diameter", "-interval", "-q2", "-steps int"} {
		if !strings.Contains(errb, want) {
			t.Errorf("privacy --help lacks %q", want)
		}
	}
}

// go test, like go run, does not stamp the commit; --version still names it
// from the source tree when git can read it.
func TestVersionNamesCommit(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v)", err)
	}
	code, out, _ := runCLI(t, "--version")
	if want := "commit " + strings.TrimSpace(string(head)); code != 0 || !strings.Contains(out, want) {
		t.Errorf("--version: exit %d, %q; want it to contain %q", code, out, want)
	}
}
