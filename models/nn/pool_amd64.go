//go:build amd64 && !purego

package nn

//go:noescape
func maxPool2S1AVX(y, r0, r1 *float32, n int)

//go:noescape
func maxPool2S1AVX512(y, r0, r1 *float32, n int)

// maxPool2S1Vec is the vector part of an output row of 2×2 stride-1
// max-pooling without argmax (y from rows r0 and r1, each len(y)+1 long):
// it returns how many outputs it wrote (all with AVX-512, whose kernel
// takes the row's tail under a mask; else all, or 0 for rows under 8).
var maxPool2S1Vec = func() func(y, r0, r1 []float32) int {
	if cpuVec < vecAVX2 {
		return nil
	}
	return func(y, r0, r1 []float32) int {
		m := len(y)
		if m == 0 {
			return 0
		}
		_, _ = r0[m], r1[m] // the kernels read r[j+1] up to j = m−1
		if vecLevel >= vecAVX512 {
			// The MNIST CNN's rows are 13 and 4 wide: one masked pass.
			maxPool2S1AVX512(&y[0], &r0[0], &r1[0], m)
			return m
		}
		if m < 8 {
			return 0
		}
		n := m &^ 7
		h := split512(n)
		if h > 0 {
			maxPool2S1AVX512(&y[0], &r0[0], &r1[0], h)
		}
		if h < n {
			maxPool2S1AVX(&y[h], &r0[h], &r1[h], n-h)
		}
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

//go:noescape
func maxPool2ArgAVX512(y *float32, arg *int32, top, bot *float32, n, w int, idx0 *[16]int32)

// maxPool2ArgVec is the vector part of maxPool2Row32 at stride 1: it
// writes all outputs with AVX-512 (a masked pass for the row's tail), else
// the first multiple of 8, and returns how many.
var maxPool2ArgVec = func() func(yo []float32, ao []int32, top, bot []float32, w int, r0 int32) int {
	if cpuVec < vecAVX2 {
		return nil
	}
	return func(yo []float32, ao []int32, top, bot []float32, w int, r0 int32) int {
		if m := len(yo); m > 0 && vecLevel >= vecAVX512 {
			_, _, _ = ao[m-1], top[m], bot[m]
			var idx [16]int32
			for k := range idx {
				idx[k] = r0 + int32(k)
			}
			maxPool2ArgAVX512(&yo[0], &ao[0], &top[0], &bot[0], m, w, &idx)
			return m
		}
		n := len(yo) &^ 7
		if n == 0 {
			return 0
		}
		_, _, _ = ao[n-1], top[n], bot[n] // the kernels read index j+1 up to j = n−1
		h := split512(n)
		if h > 0 {
			var idx [16]int32
			for k := range idx {
				idx[k] = r0 + int32(k)
			}
			maxPool2ArgAVX512(&yo[0], &ao[0], &top[0], &bot[0], h, w, &idx)
		}
		if h < n {
			var idx [8]int32
			for k := range idx {
				idx[k] = r0 + int32(h+k)
			}
			maxPool2ArgAVX(&yo[h], &ao[h], &top[h], &bot[h], n-h, w, &idx)
		}
		return n
	}
}()

//go:noescape
func maxPool2S1PlaneAVX512(y, x *float32, n, w, rows int)

//go:noescape
func maxPool2ArgPlaneAVX512(y *float32, arg *int32, x *float32, n, w, rows int, idx0 *[16]int32)

// maxPool2S1Plane pools one channel (rows+1 input rows of w, output rows
// of n = w−1) 2×2 at stride 1 without argmax in one AVX-512 call (a
// call per row cost as much as the pooling on the MNIST CNN's 13- and
// 4-wide rows); false, nothing written, below AVX-512.
func maxPool2S1Plane(y, x []float32, n, w, rows int) bool {
	if vecLevel < vecAVX512 || n < 1 || rows < 1 || n >= w {
		return false
	}
	_, _ = y[rows*n-1], x[rows*w+n]
	maxPool2S1PlaneAVX512(&y[0], &x[0], n, w, rows)
	return true
}

// maxPool2ArgPlane is maxPool2S1Plane with the argmax (input indices from
// r0, the channel's offset in the sample), as maxPool2Row32 gives it row by
// row.
func maxPool2ArgPlane(y []float32, arg []int32, x []float32, n, w, rows int, r0 int32) bool {
	if vecLevel < vecAVX512 || n < 1 || rows < 1 || n >= w {
		return false
	}
	_, _, _ = y[rows*n-1], arg[rows*n-1], x[rows*w+n]
	var idx [16]int32
	for k := range idx {
		idx[k] = r0 + int32(k)
	}
	maxPool2ArgPlaneAVX512(&y[0], &arg[0], &x[0], n, w, rows, &idx)
	return true
}
