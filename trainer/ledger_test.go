package trainer

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/mechanism"
)

// The checkpoint keeps every charged event; --resume continues it only when
// it is what the restored run's mechanism charges.
func TestResumeChecksLedger(t *testing.T) {
	c := small(t)
	c.Sampler, c.Steps, c.BatchSize = mechanism.Shuffle, 12, 625 // 8 batches per epoch of the 5000 training records
	c.CheckpointEvery = 12
	if _, err := Run(context.Background(), c, Options{StopAfter: 9}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("stop: %v", err)
	}
	path := filepath.Join(c.OutDir, "private", "checkpoint.json")
	ck := mustCheckpoint(t, c.OutDir)
	l := ck.Ledger
	// Epoch 1 charged at step 1, steps 2–8 nothing, epoch 2 at step 9.
	if l == nil || l.Steps() != 9 || len(l.Entries) != 3 || l.Entries[0].From != 1 || l.Entries[1].Kind != "no_op" || l.Entries[1].To != 8 || l.Entries[2].Event != "accountant.Gaussian{Sigma:0.5}" {
		t.Fatalf("ledger %+v", l)
	}
	// A ledger charging every step (as the sampler package once did) is not
	// this run's.
	bad := *ck
	bad.Ledger = &mechanism.Ledger{Entries: []mechanism.LedgerEntry{{From: 1, To: 9, Kind: "gaussian", Event: "accountant.Gaussian{Sigma:0.5}"}}}
	if err := saveCheckpoint(path, &bad); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), c, Options{Resume: true}); err == nil || !strings.Contains(err.Error(), "not this run's mechanism's") {
		t.Fatalf("resume with a foreign ledger: %v", err)
	}
	if err := saveCheckpoint(path, ck); err != nil {
		t.Fatal(err)
	}
	run(t, c, Options{Resume: true})
	if got := mustCheckpoint(t, c.OutDir).Ledger; got.Steps() != 12 || len(got.Entries) != 4 {
		t.Fatalf("resumed ledger %+v", got)
	}
}
