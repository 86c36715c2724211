package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the whole command to the file named
// by $DPTRAIN_CPUPROFILE, and a heap profile at its end (allocations over
// the command's life, by site: `go tool pprof -sample_index=alloc_space`)
// to the file named by $DPTRAIN_MEMPROFILE, when set: the way to see where
// a training step's time and memory go without a test harness. The
// returned function stops the profiles and closes the files.
func startProfile(stderr io.Writer) (stop func()) {
	stopCPU := startCPUProfile(stderr)
	mem := os.Getenv("DPTRAIN_MEMPROFILE")
	if mem != "" {
		runtime.MemProfileRate = 64 << 10 // every 64 KiB: the large buffers are what matter
	}
	return func() {
		stopCPU()
		if mem != "" {
			writeHeapProfile(mem, stderr)
		}
	}
}

func startCPUProfile(stderr io.Writer) (stop func()) {
	path := os.Getenv("DPTRAIN_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "warning: DPTRAIN_CPUPROFILE: %v; not profiling\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		fmt.Fprintf(stderr, "warning: DPTRAIN_CPUPROFILE: %v; not profiling\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "warning: DPTRAIN_CPUPROFILE: %v\n", err)
		}
	}
}

func writeHeapProfile(path string, stderr io.Writer) {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "warning: DPTRAIN_MEMPROFILE: %v; no heap profile\n", err)
		return
	}
	runtime.GC() // settle the in-use figures
	if err := pprof.WriteHeapProfile(f); err != nil {
		fmt.Fprintf(stderr, "warning: DPTRAIN_MEMPROFILE: %v\n", err)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(stderr, "warning: DPTRAIN_MEMPROFILE: %v\n", err)
	}
}
