package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dptrain/dptrain/internal/mpi"
	"github.com/dptrain/dptrain/trainer"
)

// collectiveTimeout bounds how long a rank waits in one collective: Open
// MPI ends the job when a rank process dies, but a rank that hangs would
// leave the others waiting forever.
var collectiveTimeout = 10 * time.Minute

// watchdog wraps a communicator so that a collective that does not return
// within the timeout ends this process with a message (the last checkpoint
// stays valid: --resume continues the job).
type watchdog struct {
	mpi.Comm
	timeout time.Duration
	stderr  io.Writer
}

func (w *watchdog) guard(op string, f func() error) error {
	t := time.AfterFunc(w.timeout, func() {
		fmt.Fprintf(w.stderr, "dptrain train: rank %d: no %s from the other ranks within %v: a rank died or hangs; ending the job (the last checkpoint is valid: rerun with --resume)\n", w.Rank(), op, w.timeout)
		os.Exit(1)
	})
	defer t.Stop()
	return f()
}

func (w *watchdog) SumFloat32(b []float32) error {
	return w.guard("all-reduce", func() error { return w.Comm.SumFloat32(b) })
}
func (w *watchdog) SumFloat64(b []float64) error {
	return w.guard("all-reduce", func() error { return w.Comm.SumFloat64(b) })
}
func (w *watchdog) MaxFloat64(b []float64) error {
	return w.guard("all-reduce", func() error { return w.Comm.MaxFloat64(b) })
}
func (w *watchdog) Broadcast(b []byte, root int) error {
	return w.guard("broadcast", func() error { return w.Comm.Broadcast(b, root) })
}

// startDistributed joins the MPI job when cfg asks for it. It returns the
// reducer (nil for a single process), whether this rank prints, and a
// function to call at the end.
func startDistributed(cfg *trainer.Config, stderr io.Writer) (trainer.Reducer, bool, func(), error) {
	if cfg.Distributed != trainer.DistributedMPI {
		return nil, true, func() {}, nil
	}
	comm, err := mpi.Init()
	if err != nil {
		return nil, false, nil, badInput("--distributed mpi: %v", err)
	}
	w := &watchdog{Comm: comm, timeout: collectiveTimeout, stderr: stderr}
	return w, comm.Rank() == 0, func() { comm.Finalize() }, nil
}
