//go:build mpi

package mpi

/*
#cgo pkg-config: ompi-c
#include <mpi.h>
#include <stdlib.h>

static int dp_init(void) {
	int provided;
	int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}
static int dp_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int dp_size(int *s) { return MPI_Comm_size(MPI_COMM_WORLD, s); }
static int dp_sum_f32(float *b, int n) { return MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }
static int dp_sum_f64(double *b, int n) { return MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); }
static int dp_sum_i64(long long *b, int n) { return MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD); }
static int dp_max_f64(double *b, int n) { return MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); }
static int dp_bcast(void *b, int n, int root) { return MPI_Bcast(b, n, MPI_BYTE, root, MPI_COMM_WORLD); }
static int dp_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int dp_finalize(void) { return MPI_Finalize(); }
static void dp_error_string(int code, char *buf, int *len) { MPI_Error_string(code, buf, len); }
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Built reports whether this binary has the MPI binding.
const Built = true

type world struct{ rank, size int }

func mpiErr(op string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	buf := make([]byte, C.MPI_MAX_ERROR_STRING)
	var n C.int
	C.dp_error_string(rc, (*C.char)(unsafe.Pointer(&buf[0])), &n)
	return fmt.Errorf("mpi %s: %s (code %d)", op, buf[:n], int(rc))
}

// Init starts MPI (once per process) on MPI_COMM_WORLD with errors
// returned, not fatal. The calling goroutine stays on its OS thread: MPI
// is initialised with MPI_THREAD_FUNNELED, so every later call must come
// from it.
func Init() (Comm, error) {
	runtime.LockOSThread()
	if err := mpiErr("init", C.dp_init()); err != nil {
		return nil, err
	}
	var r, s C.int
	if err := mpiErr("rank", C.dp_rank(&r)); err != nil {
		return nil, err
	}
	if err := mpiErr("size", C.dp_size(&s)); err != nil {
		return nil, err
	}
	return &world{rank: int(r), size: int(s)}, nil
}

func (w *world) Rank() int { return w.rank }
func (w *world) Size() int { return w.size }

func (w *world) SumFloat32(b []float32) error {
	if len(b) == 0 {
		return nil
	}
	return mpiErr("allreduce", C.dp_sum_f32((*C.float)(unsafe.Pointer(&b[0])), C.int(len(b))))
}

func (w *world) SumFloat64(b []float64) error {
	if len(b) == 0 {
		return nil
	}
	return mpiErr("allreduce", C.dp_sum_f64((*C.double)(unsafe.Pointer(&b[0])), C.int(len(b))))
}

func (w *world) SumInt64(b []int64) error {
	if len(b) == 0 {
		return nil
	}
	return mpiErr("allreduce", C.dp_sum_i64((*C.longlong)(unsafe.Pointer(&b[0])), C.int(len(b))))
}

func (w *world) MaxFloat64(b []float64) error {
	if len(b) == 0 {
		return nil
	}
	return mpiErr("allreduce", C.dp_max_f64((*C.double)(unsafe.Pointer(&b[0])), C.int(len(b))))
}

func (w *world) Broadcast(b []byte, root int) error {
	if len(b) == 0 {
		return nil
	}
	return mpiErr("broadcast", C.dp_bcast(unsafe.Pointer(&b[0]), C.int(len(b)), C.int(root)))
}

func (w *world) Barrier() error  { return mpiErr("barrier", C.dp_barrier()) }
func (w *world) Finalize() error { return mpiErr("finalize", C.dp_finalize()) }
