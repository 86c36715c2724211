package trainer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRows writes a CSV table of two features and a label per row.
func writeRows(t *testing.T, path string, rows []string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// twoClassRows is n rows of two separable classes labelled with names[0]
// and names[1].
func twoClassRows(n int, names [2]string) []string {
	rows := make([]string, n)
	for i := range rows {
		c := i % 2
		rows[i] = fmt.Sprintf("%d.%d,%d,%s", 2*c-1, i%7, 1-2*c, names[c])
	}
	return rows
}

// csvRun is a small seeded logistic regression on two CSV tables.
func csvRun(t *testing.T, train, test []string) Config {
	t.Helper()
	dir := t.TempDir()
	c := small(t)
	c.Dataset, c.Model, c.Hidden = "csv", "logreg", nil
	c.TrainFile, c.TestFile = filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	c.BatchSize, c.Steps, c.EvalEvery, c.CheckpointEvery = 30, 8, 4, 0
	c.OutDir = filepath.Join(dir, "out")
	writeRows(t, c.TrainFile, train)
	writeRows(t, c.TestFile, test)
	return c
}

// One training record of 3e38 (finite, so it passes the input check) makes
// the batch loss infinite. The run must neither stop nor release fewer
// records: a stop would publish the step that first sampled the record
// (issue 29, finding 2). Every step samples it (q = 30/40).
func TestHugeRecordDoesNotStopTheRun(t *testing.T) {
	for _, finalOnly := range []bool{false, true} {
		train := twoClassRows(40, [2]string{"0", "1"})
		train[7] = "3e38,-3e38,1"
		c := csvRun(t, train, twoClassRows(10, [2]string{"0", "1"}))
		if c.FinalOnly = finalOnly; finalOnly {
			c.Optimizer, c.Momentum, c.Radius = "sgd", 0, 5
		}
		s, err := Run(context.Background(), c, Options{})
		if err != nil {
			t.Fatalf("final_only=%v: %v", finalOnly, err)
		}
		recs := mustMetrics(t, c.OutDir)
		if s.Steps != c.Steps || len(recs) != c.Steps {
			t.Errorf("final_only=%v: %d steps, %d released records; want %d of each", finalOnly, s.Steps, len(recs), c.Steps)
		}
		diag, err := ReadMetrics(filepath.Join(c.OutDir, "private", "diagnostics.jsonl"))
		named := 0
		for _, d := range diag {
			if strings.Join(d.NonFinite, ",") == "loss" && d.Loss == 0 {
				named++
			}
		}
		if err != nil || len(diag) != c.Steps || named == 0 {
			t.Errorf("final_only=%v: %d diagnostics records (%v), %d name the loss non-finite; want %d, some", finalOnly, len(diag), err, named, c.Steps)
		}
	}
}

var _ = errors.Is
