//go:build !amd64 || purego

package lattice

// This build has no vector kernel: AddScaled's Go loop does all.
var (
	addScaledKernels []addScaledKernel
	addScaledVec     func(x []float32, t float64, acc []int64) int
)
