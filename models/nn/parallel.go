package nn

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallelism over samples. Layers split a chunk's samples (or an
// elementwise range) into contiguous grains that the workers claim in turn,
// each worker with its own workspace. A sample's result never
// depends on which worker computed it or how the range was cut, and every
// sum over samples is done in a fixed order that does not depend on the
// number of workers (see Conv2d.AccumulateScaled and GroupNorm), so results
// are bit-identical for any GOMAXPROCS: reproducibility from a seed is a
// product requirement.
//
// The workers are a fixed set of goroutines started on first use and kept,
// fed through a channel of job values (a method value stored at Build and
// two bounds), so a steady-state step allocates nothing.

// workerLimit caps the number of workers; 0 means GOMAXPROCS. Tests set it
// to compare worker counts.
var workerLimit int

// numWorkers is the number of workers a parallel range is split over.
func numWorkers() int {
	if workerLimit > 0 {
		return workerLimit
	}
	return runtime.GOMAXPROCS(0)
}

// rangeFunc processes items [lo, hi) as worker w (0 ≤ w < the worker count
// the caller sized its workspaces for).
type rangeFunc func(w, lo, hi int)

type job struct {
	fn    rangeFunc
	w     int
	n     int
	grain int
	epoch uint64
}

// gate states: the high 32 bits are the epoch of the current parallelFor,
// bit 31 is set once the caller has finished its own share and closed the
// call, and the low bits count the helpers inside it.
const (
	gateClosed = 1 << 31
	gateCount  = gateClosed - 1
)

var workPool struct {
	mu      sync.Mutex    // held by the one parallelFor running on the pool
	gate    atomic.Uint64 // epoch, closed bit and helpers inside
	next    atomic.Int64  // next unclaimed item of the current range
	epoch   uint64
	jobs    chan job
	done    chan struct{} // the last helper out of a closed call signals
	started int
}

// drain claims grains of [0, n) until none is left and runs fn on each as
// worker w. Handing out small grains instead of one block per worker keeps
// both cores busy when the machine is shared and one worker is descheduled;
// which worker computes an item never changes its value.
func drain(j job) {
	for {
		lo := int(workPool.next.Add(int64(j.grain))) - j.grain
		if lo >= j.n {
			return
		}
		j.fn(j.w, lo, min(lo+j.grain, j.n))
	}
}

// enter admits a helper to the call of its job's epoch unless that call has
// closed (its caller did all the work while the helper waited to be
// scheduled), so a late helper never touches a finished call's data.
func enter(epoch uint64) bool {
	for {
		v := workPool.gate.Load()
		if v>>32 != epoch&0xffffffff || v&gateClosed != 0 {
			return false
		}
		if workPool.gate.CompareAndSwap(v, v+1) {
			return true
		}
	}
}

func poolWorker() {
	for j := range workPool.jobs {
		if enter(j.epoch) {
			drain(j)
			// Leave; the last helper out of a call its caller has closed
			// wakes the caller (exactly one does: see parallelFor).
			if v := workPool.gate.Add(^uint64(0)); v&gateClosed != 0 && v&gateCount == 0 {
				workPool.done <- struct{}{}
			}
		}
	}
}

// minParallel is the work (in rough multiply-adds) below which parallelFor
// runs serially: waking a goroutine costs a few microseconds.
var minParallel = 1 << 15

// parallelFor runs fn over [0, n) on at most maxW workers (the caller is
// worker 0), each claiming contiguous grains until the range is done. work
// estimates the total cost; small ranges, nested calls and calls while another network uses the pool run serially as
// worker 0. fn must not depend on the split for anything but scheduling.
func parallelFor(n, maxW, work int, fn rangeFunc) {
	nw := min(numWorkers(), maxW, n)
	if nw <= 1 || work < minParallel || !workPool.mu.TryLock() {
		if n > 0 {
			fn(0, 0, n)
		}
		return
	}
	defer workPool.mu.Unlock()
	if workPool.jobs == nil {
		workPool.jobs = make(chan job, 64)
		workPool.done = make(chan struct{}, 1)
	}
	for workPool.started < nw-1 {
		go poolWorker()
		workPool.started++
	}
	workPool.epoch++
	epoch := workPool.epoch & 0xffffffff
	workPool.next.Store(0)
	workPool.gate.Store(epoch << 32)
	grain := max(1, (n+4*nw-1)/(4*nw))
	for w := 1; w < nw; w++ {
		select {
		case workPool.jobs <- job{fn: fn, w: w, n: n, grain: grain, epoch: epoch}:
		default: // helpers are behind: do without this one
		}
	}
	drain(job{fn: fn, w: 0, n: n, grain: grain})
	// Close the call; if helpers are inside it, the last one out signals.
	// Helpers that have not started by now skip it and are not waited for.
	for {
		v := workPool.gate.Load()
		if workPool.gate.CompareAndSwap(v, v|gateClosed) {
			if v&gateCount != 0 {
				<-workPool.done
			}
			return
		}
	}
}

// maxWorkers is the bound passed by layers that need no per-worker
// workspace.
const maxWorkers = 1 << 16
