//go:build !unix

package models

func cpuSeconds() float64 { return 0 }
