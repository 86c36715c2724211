//go:build !unix

package lattice

func cpuSeconds() float64 { return 0 }
