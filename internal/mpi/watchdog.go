package mpi

import (
	"fmt"
	"io"
	"os"
	"time"
)

// WithTimeout wraps c so that a collective that does not return within
// timeout ends this process with a message naming this rank and the
// operation (exit status 1; mpirun then ends the other ranks). Open MPI
// ends the job when a rank process dies, but a rank that hangs would leave
// the others waiting in the collective forever, and a blocked MPI call
// cannot be cancelled. A timeout ≤ 0 leaves c unguarded.
func WithTimeout(c Comm, timeout time.Duration, stderr io.Writer) Comm {
	if timeout <= 0 {
		return c
	}
	return &watchdog{Comm: c, timeout: timeout, stderr: stderr}
}

type watchdog struct {
	Comm
	timeout time.Duration
	stderr  io.Writer
}

// exit ends the process; a variable for the tests of this package.
var exit = os.Exit

func (w *watchdog) guard(op string, f func() error) error {
	t := time.AfterFunc(w.timeout, func() {
		// A blocked collective cannot tell which rank is missing; with two
		// ranks it can only be the other one.
		who := "a rank died or hangs"
		if w.Size() == 2 {
			who = fmt.Sprintf("rank %d died or hangs", 1-w.Rank())
		}
		fmt.Fprintf(w.stderr, "dptrain: rank %d of %d: no %s from the other ranks within %v (--rank-timeout): %s; ending the job (the last checkpoint is valid: rerun with --resume)\n", w.Rank(), w.Size(), op, w.timeout, who)
		exit(1)
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
func (w *watchdog) SumInt64(b []int64) error {
	return w.guard("all-reduce", func() error { return w.Comm.SumInt64(b) })
}
func (w *watchdog) MaxFloat64(b []float64) error {
	return w.guard("all-reduce", func() error { return w.Comm.MaxFloat64(b) })
}
func (w *watchdog) Broadcast(b []byte, root int) error {
	return w.guard("broadcast", func() error { return w.Comm.Broadcast(b, root) })
}
func (w *watchdog) Barrier() error {
	return w.guard("barrier", w.Comm.Barrier)
}
