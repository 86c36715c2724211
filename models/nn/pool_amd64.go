//go:build amd64 && !purego

package nn

import "golang.org/x/sys/cpu"

//go:noescape
func maxPool2S1AVX(y, r0, r1 *float32, n int)

// maxPool2S1Vec is the vector part of an output row of 2×2 stride-1
// max-pooling without argmax (y from rows r0 and r1, each len(y)+1 long):
// it returns how many outputs it wrote (all, or 0 for rows under 8).
var maxPool2S1Vec = func() func(y, r0, r1 []float32) int {
	if !cpu.X86.HasAVX2 {
		return nil
	}
	return func(y, r0, r1 []float32) int {
		m := len(y)
		if m < 8 {
			return 0
		}
		_, _ = r0[m], r1[m] // the kernel reads r[j+1] up to j = m−1
		n := m &^ 7
		maxPool2S1AVX(&y[0], &r0[0], &r1[0], n)
		if n < m {
			// The tail as one more vector overlapping the last one:
			// rewriting an output with the same value is harmless.
			maxPool2S1AVX(&y[m-8], &r0[m-8], &r1[m-8], 8)
		}
		return m
	}
}()

//go:noescape
func maxPool2ArgAVX(y *float32, arg *int32, top, bot *float32, n, w int, idx0 *[8]int32)

// maxPool2ArgVec is the vector part of maxPool2Row32 at stride 1: it
// writes the first multiple of 8 of the outputs and returns how many.
var maxPool2ArgVec = func() func(yo []float32, ao []int32, top, bot []float32, w int, r0 int32) int {
	if !cpu.X86.HasAVX2 {
		return nil
	}
	return func(yo []float32, ao []int32, top, bot []float32, w int, r0 int32) int {
		n := len(yo) &^ 7
		if n == 0 {
			return 0
		}
		_, _, _ = ao[n-1], top[n], bot[n] // the kernel reads index j+1 up to j = n−1
		var idx [8]int32
		for k := range idx {
			idx[k] = r0 + int32(k)
		}
		maxPool2ArgAVX(&yo[0], &ao[0], &top[0], &bot[0], n, w, &idx)
		return n
	}
}()
