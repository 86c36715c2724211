package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/trainer"
)

// --resume reads the settings from the checkpoint: no flag is retyped, and
// a conflicting one is named.
func TestResumeReadsConfigFromCheckpoint(t *testing.T) {
	cfg := trainer.Default()
	cfg.Dataset, cfg.Model, cfg.Steps, cfg.BatchSize, cfg.Sigma, cfg.Epsilon = "synthetic", "logreg", 6, 100, 1, 0
	cfg.Seed, cfg.Seeded, cfg.Plots, cfg.EvalEvery, cfg.CheckpointEvery = 3, true, false, 0, 1
	cfg.OutDir = filepath.Join(t.TempDir(), "run")
	if _, err := trainer.Run(context.Background(), cfg, trainer.Options{StopAfter: 2}); !errors.Is(err, trainer.ErrInterrupted) {
		t.Fatalf("first part: %v", err)
	}
	code, _, errb := runCLI(t, "train", "--resume", "--out", cfg.OutDir, "--lr", "0.5", "--quiet")
	if code != 2 || !strings.Contains(errb, "lr") {
		t.Fatalf("resume with another --lr: exit %d, %q; want 2 naming lr", code, errb)
	}
	// Every train flag is accepted on resume, those that are no
	// configuration setting (--rank-timeout, --json, …) included: the
	// checkpoint's settings are parsed with the same flag list.
	code, _, errb = runCLI(t, "train", "--resume", "--out", cfg.OutDir, "--quiet", "--rank-timeout", "30s", "--interrupted-test=false")
	if code != 0 || !strings.Contains(errb, "6 steps") && !strings.Contains(errb, "of 6") {
		t.Fatalf("resume without flags: exit %d, %q", code, errb)
	}
	code, _, errb = runCLI(t, "train", "--resume", "--out", cfg.OutDir, "--quiet")
	// Resuming a finished run is no fault (exit 1 is for runtime faults):
	// exit 0, saying so.
	if code != 0 || !strings.Contains(errb, "holds a completed run (6 steps); nothing to resume") {
		t.Fatalf("resuming a finished run: exit %d, %q; want 0 and a message that it is finished", code, errb)
	}
}
