//go:build !mpi

package mpi

// Init starts MPI; in this build it returns ErrNotBuilt.
func Init() (Comm, error) { return nil, ErrNotBuilt }

// Built reports whether this binary has the MPI binding.
const Built = false
