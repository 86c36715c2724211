//go:build unix

package gemm

import "syscall"

// cpuSeconds is the process's user+system CPU time, so benchmarks can report
// GFLOP per CPU-second, which other load on a shared machine distorts far
// less than it distorts wall-clock GFLOP/s.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
