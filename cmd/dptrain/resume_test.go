package main

import (
	"context"
	"errors"
	"fmt"
	"os"
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

// A --scale standardize run interrupted and resumed over a changed
// training file (issue 37, finding 3) exits 2, naming the file and not the
// changed value; resumed over the original file it finishes.
func TestResumeOverChangedCSVExits2(t *testing.T) {
	dir := t.TempDir()
	tr, te := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	rows := func(n int, odd string) string {
		var b strings.Builder
		b.WriteString("a,b,class\n")
		for i := range n {
			c := i % 3
			a := fmt.Sprintf("%d.%d", c*3, i%7)
			if i == 11 && odd != "" {
				a = odd
			}
			fmt.Fprintf(&b, "%s,%d,%d\n", a, -c*2, c)
		}
		return b.String()
	}
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(tr, rows(200, ""))
	write(te, rows(60, ""))
	cfg := trainer.Default()
	cfg.Dataset, cfg.TrainFile, cfg.TestFile, cfg.Model = trainer.DatasetCSV, tr, te, "logreg"
	cfg.Steps, cfg.BatchSize, cfg.Sigma, cfg.Epsilon, cfg.Delta = 6, 50, 1, 0, 1e-4
	cfg.Scale, cfg.FeatureBounds, cfg.ScaleSigma = trainer.ScaleStandardize, "0:10,-5:1", 5
	cfg.Seed, cfg.Seeded, cfg.Plots, cfg.EvalEvery, cfg.CheckpointEvery = 3, true, false, 0, 1
	cfg.OutDir = filepath.Join(dir, "run")
	if _, err := trainer.Run(context.Background(), cfg, trainer.Options{StopAfter: 2}); !errors.Is(err, trainer.ErrInterrupted) {
		t.Fatalf("first part: %v", err)
	}
	write(tr, rows(200, "7.654321"))
	code, _, errb := runCLI(t, "train", "--resume", "--out", cfg.OutDir, "--quiet")
	if code != 2 || !strings.Contains(errb, "training data ("+tr+")") || strings.Contains(errb, "7.654321") || strings.Contains(errb, "test data") {
		t.Fatalf("resume over a changed training file: exit %d, %q; want 2 naming %s and no value", code, errb, tr)
	}
	write(tr, rows(200, ""))
	if code, _, errb = runCLI(t, "train", "--resume", "--out", cfg.OutDir, "--quiet"); code != 0 {
		t.Fatalf("resume over the original file: exit %d, %q", code, errb)
	}
}
