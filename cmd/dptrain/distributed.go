package main

import (
	"io"
	"time"

	"github.com/dptrain/dptrain/internal/mpi"
	"github.com/dptrain/dptrain/trainer"
)

// startDistributed joins the MPI job when cfg asks for it. It returns the
// reducer (nil for a single process), whether this rank prints, and a
// function to call at the end. Every collective waits at most rankTimeout
// (see mpi.WithTimeout).
func startDistributed(cfg *trainer.Config, rankTimeout time.Duration, stderr io.Writer) (trainer.Reducer, bool, func(), error) {
	if cfg.Distributed != trainer.DistributedMPI {
		return nil, true, func() {}, nil
	}
	comm, err := mpi.Init()
	if err != nil {
		return nil, false, nil, badInput("--distributed mpi: %v", err)
	}
	return mpi.WithTimeout(comm, rankTimeout, stderr), comm.Rank() == 0, func() { comm.Finalize() }, nil
}
