//go:build unix

package cputime

import "syscall"

// Process is the process's user+system CPU time in seconds (all threads),
// or 0 if the system does not report it.
func Process() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
