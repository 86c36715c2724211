package benchmarks

import (
	"runtime"
	"sync"
	"time"
)

// memWatch samples runtime.MemStats in a goroutine and keeps the peaks.
type memWatch struct {
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	heap uint64 // peak HeapInuse
	sys  uint64 // peak Sys
}

// watchMemory starts sampling every period after one GC, so the peaks
// belong to what runs next rather than to earlier garbage.
func watchMemory(period time.Duration) *memWatch {
	runtime.GC()
	w := &memWatch{stop: make(chan struct{})}
	w.sample()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				w.sample()
			}
		}
	}()
	return w
}

func (w *memWatch) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.mu.Lock()
	w.heap = max(w.heap, ms.HeapInuse)
	w.sys = max(w.sys, ms.Sys)
	w.mu.Unlock()
}

// Stop ends sampling (after one last sample) and returns the peaks in MiB.
func (w *memWatch) Stop() (heapMiB, sysMiB float64) {
	close(w.stop)
	w.wg.Wait()
	w.sample()
	const mib = 1 << 20
	return float64(w.heap) / mib, float64(w.sys) / mib
}
