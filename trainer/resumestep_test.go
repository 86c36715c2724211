package trainer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A checkpoint whose step was edited (its checksum recomputed, as an
// editor would) is refused with a message saying that its step disagrees
// with its events; before, it read "the events it charged are not this
// run's mechanism's", which sent the user looking for a changed flag.
func TestResumeRefusesEditedStep(t *testing.T) {
	c := Default()
	c.Dataset, c.Model = "synthetic", "logreg"
	c.BatchSize, c.Steps, c.Sigma, c.LR = 200, 6, 1, 0.5
	c.Seeded, c.Epsilon, c.Plots, c.OutDir = true, 0, false, t.TempDir()
	if _, err := Run(context.Background(), c, Options{StopAfter: 3}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	path := filepath.Join(c.OutDir, "private", "checkpoint.json")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []int{1, 5, 3} {
		ck, err := parseCheckpoint(orig)
		if err != nil {
			t.Fatal(err)
		}
		if ck.Step != 3 || ck.Ledger.Steps() != 3 {
			t.Fatalf("checkpoint at step %d, ledger through %d; want 3", ck.Step, ck.Ledger.Steps())
		}
		ck.Step = step
		b, err := encodeCheckpoint(ck)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = Run(context.Background(), c, Options{Resume: true})
		if step == 3 {
			if err != nil {
				t.Errorf("the unedited checkpoint: %v", err)
			}
			continue
		}
		want := "its step (" + map[int]string{1: "1", 5: "5"}[step] + ") disagrees with its events, which were charged through step 3"
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "mechanism") {
			t.Errorf("step edited to %d: %v; want %q", step, err, want)
		}
	}
}
