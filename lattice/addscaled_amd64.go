//go:build amd64 && !purego

package lattice

import "golang.org/x/sys/cpu"

//go:noescape
func addScaledAVX2(x *float32, n int, t float64, acc *int64) int

//go:noescape
func addScaledAVX512(x *float32, n int, t float64, acc *int64) int

// addScaledKernels are AddScaled's vector loops, narrowest first, each with
// whether this CPU runs it. Both give the scalar loop's integers exactly
// (see addscaled_amd64.s): the product is the same IEEE multiply, and the
// truncation is exact.
var addScaledKernels = []addScaledKernel{
	{"avx2", cpu.X86.HasAVX2, vecAddScaled(addScaledAVX2)},
	{"avx512", cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ, vecAddScaled(addScaledAVX512)},
}

func vecAddScaled(f func(x *float32, n int, t float64, acc *int64) int) func(x []float32, t float64, acc []int64) int {
	return func(x []float32, t float64, acc []int64) int {
		if len(x) < 8 {
			return 0
		}
		return f(&x[0], len(x)&^7, t, &acc[0])
	}
}

// addScaledVec is the widest kernel this CPU runs, nil without AVX2.
var addScaledVec = func() func(x []float32, t float64, acc []int64) int {
	var f func(x []float32, t float64, acc []int64) int
	for _, k := range addScaledKernels {
		if k.ok {
			f = k.fn
		}
	}
	return f
}()
