package nn

import (
	"runtime"
	"sync"
)

// Parallelism over samples. Layers split a chunk's samples (or an
// elementwise range) into contiguous blocks, one per worker, and run each
// block on its own goroutine with its own workspace. A sample's result never
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
	fn        rangeFunc
	w, lo, hi int
}

var workPool struct {
	mu      sync.Mutex // held by the one parallelFor running on the pool
	wg      sync.WaitGroup
	jobs    chan job
	started int
}

func poolWorker() {
	for j := range workPool.jobs {
		j.fn(j.w, j.lo, j.hi)
		workPool.wg.Done()
	}
}

// minParallel is the work (in rough multiply-adds) below which parallelFor
// runs serially: waking a goroutine costs a few microseconds.
var minParallel = 1 << 15

// parallelFor runs fn over [0, n) split into at most maxW contiguous blocks,
// the caller taking the first. work estimates the total cost; small ranges,
// nested calls and calls while another network uses the pool run serially as
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
	}
	for workPool.started < nw-1 {
		go poolWorker()
		workPool.started++
	}
	workPool.wg.Add(nw - 1)
	for w := 1; w < nw; w++ {
		workPool.jobs <- job{fn: fn, w: w, lo: w * n / nw, hi: (w + 1) * n / nw}
	}
	fn(0, 0, n/nw)
	workPool.wg.Wait()
}

// maxWorkers is the bound passed by layers that need no per-worker
// workspace.
const maxWorkers = 1 << 16
