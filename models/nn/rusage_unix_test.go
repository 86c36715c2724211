//go:build unix

package nn

import "syscall"

// cpuSeconds is the process's user+system CPU time, so benchmarks can report
// throughput per CPU-second, which other load on a shared machine does not
// distort the way it distorts wall-clock throughput.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
