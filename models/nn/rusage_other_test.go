//go:build !unix

package nn

func cpuSeconds() float64 { return 0 }
