//go:build !amd64 || purego

package clip

// This build has no vector kernel: laneSum's Go loop does all.
var (
	laneSumKernels []laneSumKernel
	laneSumVec     func(v []float32, acc *[4]float64) uint32
)
