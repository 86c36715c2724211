//go:build amd64 && !purego

package nn

import "golang.org/x/sys/cpu"

// The vector kernel sets of the elementwise, pooling and tanh passes,
// narrowest first. x/sys/cpu reports AVX-512 only when the OS saves its
// register state; every AVX-512 CPU also has AVX2, which the passes use
// for a last 8 lanes.
const (
	vecNone = iota
	vecAVX2
	vecAVX512
)

// cpuVec is the widest kernel set this CPU runs.
var cpuVec = func() int {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX2:
		return vecAVX512
	case cpu.X86.HasAVX2:
		return vecAVX2
	}
	return vecNone
}()

// vecLevel is the kernel set in use: cpuVec, lowered only by tests that
// check each set against the Go loops.
var vecLevel = cpuVec
