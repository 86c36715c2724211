//go:build amd64 && !purego

package nn

//go:noescape
func tanh8AVX2(out, x *float32, n int, c *[15][8]float32)

//go:noescape
func tanh16AVX512(out, x *float32, n int, c *[15][8]float32)

// tanhVec is the vector tanh32 for the bulk of a slice, nil without AVX2:
// the AVX-512 kernel takes the multiple of 16, the AVX2 one a last 8.
var tanhVec = func() func(out, x []float32) int {
	if cpuVec < vecAVX2 {
		return nil
	}
	var c [15][8]float32
	for i, v := range tanhConsts() {
		for j := range c[i] {
			c[i][j] = v
		}
	}
	return func(out, x []float32) int {
		n := len(out) &^ 7
		if n == 0 {
			return 0
		}
		_ = x[n-1]
		h := split512(n)
		if h > 0 {
			tanh16AVX512(&out[0], &x[0], h, &c)
		}
		if h < n {
			tanh8AVX2(&out[h], &x[h], n-h, &c)
		}
		return n
	}
}()
