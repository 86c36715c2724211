package nn

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
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
// Affinity: the range is cut into one home segment per worker, the same
// cut in every layer, and each worker claims grains of its own segment
// first, then helps with the others'. Worker w is always the same goroutine
// (the caller is worker 0; helper w reads its own channel), so in the steady
// state sample i is produced and consumed on the same core from layer to
// layer. On the 2-core machines we run on, the two cores do not share a
// last-level cache in practice: data the other core wrote reads at about a
// third of the speed of data this core wrote (docs/architecture.md#two-cores),
// and the previous first-come grain order made the memory-bound passes cost
// 1.5× the CPU time per sample on two cores.
//
// The workers are a fixed set of goroutines started on first use and kept,
// fed through channels of job values (a method value stored at Build and
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
	nseg  int // home segments of the call (one per worker)
	n     int
	epoch uint64
}

// gate states: the high 32 bits are the epoch of the current parallelFor,
// bit 31 is set once the caller has finished its own share and closed the
// call, and the low bits count the helpers inside it.
const (
	gateClosed = 1 << 31
	gateCount  = gateClosed - 1
)

// segment is the claim counter of one home segment, alone on its cache
// line so that the workers' claims do not contend.
type segment struct {
	next atomic.Int64 // offset of the next unclaimed item in the segment
	_    [56]byte
}

var workPool struct {
	mu    sync.Mutex    // held by the one parallelFor running on the pool
	gate  atomic.Uint64 // epoch, closed bit and helpers inside
	segs  []segment     // one per worker of the current call
	epoch uint64
	jobs  []chan job    // jobs[w-1] feeds helper w
	done  chan struct{} // the last helper out of a closed call signals
}

// segmentOf is the home segment [lo, hi) of worker s among nw over [0, n):
// the same cut for every call over n items.
func segmentOf(s, nw, n int) (lo, hi int) { return s * n / nw, (s + 1) * n / nw }

// drain runs fn on grains of [0, n) as worker w: first its own home
// segment, front to back, then the other segments' remaining grains. Small
// grains instead of one block per worker keep both cores busy when the
// machine is shared and one worker is descheduled; which worker computes an
// item never changes its value.
func drain(j job) {
	for k := range j.nseg {
		s := (j.w + k) % j.nseg
		lo, hi := segmentOf(s, j.nseg, j.n)
		grain := int64(max(1, (hi-lo+3)/4))
		seg := &workPool.segs[s]
		for {
			off := int(seg.next.Add(grain) - grain)
			if lo+off >= hi {
				break
			}
			j.fn(j.w, lo+off, min(lo+off+int(grain), hi))
		}
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

func poolWorker(jobs <-chan job) {
	for {
		j, ok := nextJob(jobs)
		if !ok {
			return
		}
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

// spinFor is how long an idle helper polls for its next job, yielding
// between polls, before it blocks on its channel. A step's parallel calls
// come microseconds apart; a helper that has gone to sleep in between is
// woken through the OS (a futex call on each side): on the MNIST CNN's
// two-core step that was 5.6% of the CPU time. Polling never changes which
// items a worker computes, only when it looks for them.
const spinFor = 50 * time.Microsecond

// spin calls try until it succeeds, for up to spinFor, yielding between
// calls; it reports whether try succeeded.
func spin(try func() bool) bool {
	start := time.Now()
	for !try() {
		if time.Since(start) > spinFor {
			return false
		}
		runtime.Gosched()
	}
	return true
}

// nextJob returns the helper's next job, polling for up to spinFor before
// blocking; ok is false when the channel is closed.
func nextJob(jobs <-chan job) (j job, ok bool) {
	if spin(func() bool {
		select {
		case j, ok = <-jobs:
			return true
		default:
			return false
		}
	}) {
		return j, ok
	}
	j, ok = <-jobs
	return j, ok
}

// waitDone waits for the last helper out of a closed call, polling for up
// to spinFor first, as nextJob does: the helpers are usually a grain away
// from done, and a parked caller is woken through the OS.
func waitDone() {
	if spin(func() bool {
		select {
		case <-workPool.done:
			return true
		default:
			return false
		}
	}) {
		return
	}
	<-workPool.done
}

// homeSegments switches the home segments off (one segment shared by all
// workers in first-come order, as before) for the benchmark that measures
// what they buy.
var homeSegments = true

// minParallel is the work (in rough multiply-adds) below which parallelFor
// runs serially: waking a goroutine costs a few microseconds.
var minParallel = 1 << 15

// parallelFor runs fn over [0, n) on at most maxW workers (the caller is
// worker 0), each claiming contiguous grains of its home segment, then of
// the others', until the range is done. work estimates the total cost;
// small ranges, nested calls and calls while another network uses the pool
// run serially as worker 0. fn must not depend on the split for anything
// but scheduling.
func parallelFor(n, maxW, work int, fn rangeFunc) {
	nw := min(numWorkers(), maxW, n)
	if nw <= 1 || work < minParallel || !workPool.mu.TryLock() {
		if n > 0 {
			fn(0, 0, n)
		}
		return
	}
	defer workPool.mu.Unlock()
	if workPool.done == nil {
		workPool.done = make(chan struct{}, 1)
	}
	// No helper is inside a call here (the previous caller waited for them),
	// so the segments may be reallocated.
	if len(workPool.segs) < nw {
		workPool.segs = make([]segment, nw)
	}
	for len(workPool.jobs) < nw-1 {
		ch := make(chan job, 64)
		workPool.jobs = append(workPool.jobs, ch)
		go poolWorker(ch)
	}
	workPool.epoch++
	epoch := workPool.epoch & 0xffffffff
	nseg := nw
	if !homeSegments {
		nseg = 1
	}
	for s := range nseg {
		workPool.segs[s].next.Store(0)
	}
	workPool.gate.Store(epoch << 32)
	for w := 1; w < nw; w++ {
		select {
		case workPool.jobs[w-1] <- job{fn: fn, w: w, nseg: nseg, n: n, epoch: epoch}:
		default: // this helper is behind: do without it
		}
	}
	drain(job{fn: fn, w: 0, nseg: nseg, n: n})
	// Close the call; if helpers are inside it, the last one out signals.
	// Helpers that have not started by now skip it and are not waited for.
	for {
		v := workPool.gate.Load()
		if workPool.gate.CompareAndSwap(v, v|gateClosed) {
			if v&gateCount != 0 {
				waitDone()
			}
			return
		}
	}
}

// maxWorkers is the bound passed by layers that need no per-worker
// workspace.
const maxWorkers = 1 << 16
