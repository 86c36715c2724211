//go:build !unix

package cputime

// Process is 0 where the process's CPU time is not available: benchmarks
// then report wall-clock figures only.
func Process() float64 { return 0 }
