package trainer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOutDirHoldingARunIsRefused(t *testing.T) {
	cfg := Default()
	cfg.Dataset, cfg.Model, cfg.Steps, cfg.BatchSize, cfg.Sigma, cfg.Epsilon = "synthetic", "logreg", 3, 100, 1, 0
	cfg.Seeded, cfg.Plots, cfg.EvalEvery, cfg.CheckpointEvery = true, false, 0, 1
	cfg.OutDir = filepath.Join(t.TempDir(), "run")
	if _, err := Run(context.Background(), cfg, Options{StopAfter: 2}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("first run: %v", err)
	}
	ck := filepath.Join(cfg.OutDir, privateDir, "checkpoint.json")
	if _, err := os.Stat(ck); err != nil {
		t.Fatalf("interrupted run left no checkpoint: %v", err)
	}
	_, err := Run(context.Background(), cfg, Options{})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "holds another run (release/summary.json)") {
		t.Fatalf("second run into the same out_dir: %v, want a refusal naming what it holds", err)
	}
	cfg.Steps = 2
	if _, err := Run(context.Background(), cfg, Options{Overwrite: true}); err != nil {
		t.Fatalf("--overwrite: %v", err)
	}
	if _, err := os.Stat(ck); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the old run's checkpoint stays beside the new model (%v)", err)
	}
}

func TestReportHTML(t *testing.T) {
	cfg := Default()
	cfg.Dataset, cfg.Model, cfg.Steps, cfg.BatchSize, cfg.Sigma, cfg.Epsilon = "synthetic", "logreg", 3, 100, 1, 0
	cfg.Seeded, cfg.Plots, cfg.EvalEvery = true, true, 1
	cfg.OutDir = filepath.Join(t.TempDir(), "run")
	if _, err := Run(context.Background(), cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(cfg.OutDir, releaseDir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"-DP under", NPublic, "unit of privacy is one training example", "Not covered", "data:image/png;base64,", `&#34;model&#34;: &#34;logreg&#34;`, "reproducible, not private"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(page, cfg.OutDir) {
		t.Errorf("report.html names the machine path %s", cfg.OutDir)
	}
}
