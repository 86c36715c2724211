//go:build !amd64 || purego

package nn

// Without vector kernels the strided im2col and col2im stay in Go.
func s2Gather(ow int) bool     { return false }
func s2Scatter(ow, k int) bool { return false }

func gatherS2(u, x []float32, k, rows, ld, ow, wp int)        { panic("nn: no stride-2 kernel") }
func scatterAddS2(acc, du []float32, k, rows, ld, ow, wp int) { panic("nn: no stride-2 kernel") }
