//go:build amd64 && !purego

package nn

import "golang.org/x/sys/cpu"

//go:noescape
func tanh8AVX2(out, x *float32, n int, c *[15][8]float32)

// tanhVec is the vector tanh32 for the bulk of a slice, nil without AVX2.
var tanhVec = func() func(out, x []float32) int {
	if !cpu.X86.HasAVX2 {
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
		if n > 0 {
			tanh8AVX2(&out[0], &x[0], n, &c)
		}
		return n
	}
}()
