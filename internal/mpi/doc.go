// Package mpi is a thin binding to Open MPI for data-parallel training
// (mpirun -np N dptrain train --distributed mpi): init and finalize, rank
// and size, all-reduce (sum of float32, float64, int64; max of float64),
// broadcast and barrier, every call returning an error instead of
// aborting (MPI_ERRORS_RETURN).
//
// The binding needs cgo and libopenmpi-dev, so it is built only with the
// build tag mpi (go build -tags mpi ./cmd/dptrain); without it Init returns
// ErrNotBuilt, which says how to build it, and the default build stays
// cgo-free. No maintained Go binding builds against Debian's Open MPI 4.1
// offline and covers error returns, so this is a few dozen lines of cgo.
package mpi

import "errors"

// Comm is a communicator: the processes of one job.
type Comm interface {
	Rank() int
	Size() int
	// SumFloat32, SumFloat64 and SumInt64 replace buf on every rank by the
	// element-wise sum over ranks.
	SumFloat32(buf []float32) error
	SumFloat64(buf []float64) error
	SumInt64(buf []int64) error
	// MaxFloat64 replaces buf by the element-wise maximum over ranks.
	MaxFloat64(buf []float64) error
	// Broadcast sends root's buf to every rank; buf must have the same
	// length everywhere (broadcast the length first when it varies).
	Broadcast(buf []byte, root int) error
	Barrier() error
	// Finalize ends the MPI job for this process.
	Finalize() error
}

// ErrNotBuilt is returned by Init in a build without the mpi tag.
var ErrNotBuilt = errors.New("this dptrain was built without MPI: install Open MPI (apt-get install openmpi-bin libopenmpi-dev) and build with `go build -tags mpi -o dptrain ./cmd/dptrain`, then run `mpirun -np N ./dptrain train --distributed mpi`")
