//go:build amd64 && !purego

package nn

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

//go:noescape
func reluFwdAVX512(y, x *float32, n int)

//go:noescape
func reluBackAVX512(dx, out, dy *float32, n int)

//go:noescape
func gnNormAVX512(xh, out, x *float32, n int, mean, r float64, gm, bt float32)

//go:noescape
func gnBackAVX512(dx, dy, xh *float32, n int, gm, a, b float32)

//go:noescape
func addAVX512(dst, a, b *float32, n int)

//go:noescape
func axpyAVX512(a float32, x, y *float32, n int)

//go:noescape
func tanhBackAVX512(dx, out, dy *float32, n int)

// The vector passes below each handle the longest multiple-of-8 prefix of
// their slices and return its length; the callers finish the tail in Go.
// Each computes what the Go loop computes, bit for bit. With AVX-512 the
// AVX-512 pass (elem512_amd64.s) takes the multiple of 16 and the AVX2
// pass a last 8; elementwise, the split cannot change a result.

// split512 is how much of an n-element prefix (a multiple of 8) the
// AVX-512 pass takes: all of it but a last 8, or nothing below AVX-512.
func split512(n int) int {
	if vecLevel < vecAVX512 {
		return 0
	}
	return n &^ 15
}

func reluFwdVec(y, x []float32) int {
	n := len(y) &^ 7
	if vecLevel < vecAVX2 || n == 0 {
		return 0
	}
	_ = x[n-1]
	h := split512(n)
	if h > 0 {
		reluFwdAVX512(&y[0], &x[0], h)
	}
	if h < n {
		reluFwdAVX(&y[h], &x[h], n-h)
	}
	return n
}

func reluBackVec(dx, out, dy []float32) int {
	n := len(dx) &^ 7
	if vecLevel < vecAVX2 || n == 0 {
		return 0
	}
	_, _ = out[n-1], dy[n-1]
	h := split512(n)
	if h > 0 {
		reluBackAVX512(&dx[0], &out[0], &dy[0], h)
	}
	if h < n {
		reluBackAVX(&dx[h], &out[h], &dy[h], n-h)
	}
	return n
}

func gnNormVec(xh, out, x []float32, mean, r float64, gm, bt float32) int {
	n := len(x) &^ 7
	if vecLevel < vecAVX2 || n == 0 {
		return 0
	}
	_, _ = xh[n-1], out[n-1]
	h := split512(n)
	if h > 0 {
		gnNormAVX512(&xh[0], &out[0], &x[0], h, mean, r, gm, bt)
	}
	if h < n {
		gnNormAVX(&xh[h], &out[h], &x[h], n-h, mean, r, gm, bt)
	}
	return n
}

func gnBackVec(dx, dy, xh []float32, gm, a, b float32) int {
	n := len(xh) &^ 7
	if vecLevel < vecAVX2 || n == 0 {
		return 0
	}
	_, _ = dx[n-1], dy[n-1]
	h := split512(n)
	if h > 0 {
		gnBackAVX512(&dx[0], &dy[0], &xh[0], h, gm, a, b)
	}
	if h < n {
		gnBackAVX(&dx[h], &dy[h], &xh[h], n-h, gm, a, b)
	}
	return n
}

func addVec(dst, a, b []float32) int {
	n := len(dst) &^ 7
	if vecLevel < vecAVX2 || n == 0 {
		return 0
	}
	_, _ = a[n-1], b[n-1]
	h := split512(n)
	if h > 0 {
		addAVX512(&dst[0], &a[0], &b[0], h)
	}
	if h < n {
		addAVX(&dst[h], &a[h], &b[h], n-h)
	}
	return n
}

func axpyVec(a float32, x, y []float32) int {
	n := len(x) &^ 7
	if vecLevel < vecAVX2 || n == 0 {
		return 0
	}
	_ = y[n-1]
	h := split512(n)
	if h > 0 {
		axpyAVX512(a, &x[0], &y[0], h)
	}
	if h < n {
		axpyAVX(a, &x[h], &y[h], n-h)
	}
	return n
}

func tanhBackVec(dx, out, dy []float32) int {
	n := len(dx) &^ 7
	if vecLevel < vecAVX2 || n == 0 {
		return 0
	}
	_, _ = out[n-1], dy[n-1]
	h := split512(n)
	if h > 0 {
		tanhBackAVX512(&dx[0], &out[0], &dy[0], h)
	}
	if h < n {
		tanhBackAVX(&dx[h], &out[h], &dy[h], n-h)
	}
	return n
}
