package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the whole command to the file named
// by $DPTRAIN_CPUPROFILE, when set (read it with `go tool pprof`): the way
// to see where a training step's time goes without a test harness. The
// returned function stops the profile and closes the file.
func startProfile(stderr io.Writer) (stop func()) {
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
