//go:build !amd64 || purego

package clip

// laneSumVec is nil: this build has no vector kernel.
var laneSumVec func(v []float32, acc *[4]float64) uint32
