//go:build !amd64 || purego

package nn

// tanhVec is nil: this build has no vector tanh32.
var tanhVec func(out, x []float32) int
