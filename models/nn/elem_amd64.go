//go:build amd64 && !purego

package nn

import "golang.org/x/sys/cpu"

//go:noescape
func reluFwdAVX(y, x *float32, n int)

//go:noescape
func reluBackAVX(dx, out, dy *float32, n int)

//go:noescape
func gnNormAVX(xh, out, x *float32, n int, mean, r float64, gm, bt float32)

//go:noescape
func gnBackAVX(dx, dy, xh *float32, n int, gm, a, b float32)

//go:noescape
func addAVX(dst, a, b *float32, n int)

//go:noescape
func axpyAVX(a float32, x, y *float32, n int)

//go:noescape
func tanhBackAVX(dx, out, dy *float32, n int)

// hasElemAVX selects the vector elementwise passes (elem_amd64.s).
var hasElemAVX = cpu.X86.HasAVX2

// The vector passes below each handle the longest multiple-of-8 prefix of
// their slices and return its length; the callers finish the tail in Go.
// Each computes what the Go loop computes, bit for bit.

func reluFwdVec(y, x []float32) int {
	n := len(y) &^ 7
	if !hasElemAVX || n == 0 {
		return 0
	}
	_ = x[n-1]
	reluFwdAVX(&y[0], &x[0], n)
	return n
}

func reluBackVec(dx, out, dy []float32) int {
	n := len(dx) &^ 7
	if !hasElemAVX || n == 0 {
		return 0
	}
	_, _ = out[n-1], dy[n-1]
	reluBackAVX(&dx[0], &out[0], &dy[0], n)
	return n
}

func gnNormVec(xh, out, x []float32, mean, r float64, gm, bt float32) int {
	n := len(x) &^ 7
	if !hasElemAVX || n == 0 {
		return 0
	}
	_, _ = xh[n-1], out[n-1]
	gnNormAVX(&xh[0], &out[0], &x[0], n, mean, r, gm, bt)
	return n
}

func gnBackVec(dx, dy, xh []float32, gm, a, b float32) int {
	n := len(xh) &^ 7
	if !hasElemAVX || n == 0 {
		return 0
	}
	_, _ = dx[n-1], dy[n-1]
	gnBackAVX(&dx[0], &dy[0], &xh[0], n, gm, a, b)
	return n
}

func addVec(dst, a, b []float32) int {
	n := len(dst) &^ 7
	if !hasElemAVX || n == 0 {
		return 0
	}
	_, _ = a[n-1], b[n-1]
	addAVX(&dst[0], &a[0], &b[0], n)
	return n
}

func axpyVec(a float32, x, y []float32) int {
	n := len(x) &^ 7
	if !hasElemAVX || n == 0 {
		return 0
	}
	_ = y[n-1]
	axpyAVX(a, &x[0], &y[0], n)
	return n
}

func tanhBackVec(dx, out, dy []float32) int {
	n := len(dx) &^ 7
	if !hasElemAVX || n == 0 {
		return 0
	}
	_, _ = out[n-1], dy[n-1]
	tanhBackAVX(&dx[0], &out[0], &dy[0], n)
	return n
}
