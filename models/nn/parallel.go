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
}

var workPool struct {
	mu      sync.Mutex // held by the one parallelFor running on the pool
	wg      sync.WaitGroup
	next    atomic.Int64 // next unclaimed item of the current range
	jobs    chan job
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

func poolWorker() {
	for j := range workPool.jobs {
		drain(j)
		workPool.wg.Done()
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
	}
	for workPool.started < nw-1 {
		go poolWorker()
		workPool.started++
	}
	workPool.wg.Add(nw - 1)
	workPool.next.Store(0)
	grain := max(1, (n+4*nw-1)/(4*nw))
	for w := 1; w < nw; w++ {
		workPool.jobs <- job{fn: fn, w: w, n: n, grain: grain}
	}
	drain(job{fn: fn, w: 0, n: n, grain: grain})
	workPool.wg.Wait()
}

// maxWorkers is the bound passed by layers that need no per-worker
// workspace.
const maxWorkers = 1 << 16
