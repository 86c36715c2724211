//go:build !amd64 || purego

package nn

// This build has no vector kernels: the Go loops do all.
const (
	vecNone = iota
	vecAVX2
	vecAVX512
)

var (
	cpuVec   = vecNone
	vecLevel = vecNone
)
