package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// A fixed pool of worker goroutines takes tiles of large products. Handing a
// *job to a running goroutine allocates nothing, where `go f()` per call would.
var (
	poolMu   sync.Mutex
	poolN    int       // workers started so far
	jobs     chan *job // tile work for the pool
	freeJobs []*job    // finished jobs for reuse, guarded by poolMu (kept across GCs, unlike a sync.Pool)
)

// job is one parallel product: workers claim tiles from next until none are
// left, then signal done.
type job struct {
	pr   problem
	next atomic.Int64
	done sync.WaitGroup
}

func (j *job) work() {
	pr := &j.pr
	ar := getArena(pr.kern)
	n := int64(pr.mb * pr.nb)
	for t := j.next.Add(1) - 1; t < n; t = j.next.Add(1) - 1 {
		pr.runTile(ar, int(t))
	}
	putArena(ar)
}

func numWorkers() int { return runtime.GOMAXPROCS(0) }

// ensureWorkers starts pool goroutines until there are n.
func ensureWorkers(n int) {
	poolMu.Lock()
	defer poolMu.Unlock()
	if jobs == nil {
		jobs = make(chan *job, 256)
	}
	for ; poolN < n; poolN++ {
		go func() {
			for j := range jobs {
				j.work()
				j.done.Done()
			}
		}()
	}
}

// runParallel computes every tile of pr with up to workers goroutines, the
// caller being one of them. Helpers are only offered the job: if the pool is
// saturated by other products, the caller does the tiles itself.
func runParallel(pr *problem, workers int) {
	tiles := pr.mb * pr.nb
	helpers := min(workers, tiles) - 1
	ensureWorkers(helpers)
	poolMu.Lock()
	var j *job
	if n := len(freeJobs); n > 0 {
		j, freeJobs[n-1] = freeJobs[n-1], nil
		freeJobs = freeJobs[:n-1]
	}
	poolMu.Unlock()
	if j == nil {
		j = new(job)
	}
	j.pr = *pr
	j.next.Store(0)
	for range helpers {
		j.done.Add(1)
		select {
		case jobs <- j:
		default:
			j.done.Done()
		}
	}
	j.work()
	j.done.Wait()
	j.pr = problem{} // drop references to the caller's slices
	poolMu.Lock()
	freeJobs = append(freeJobs, j)
	poolMu.Unlock()
}
