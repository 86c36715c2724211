//go:build !amd64 || purego

package nn

// maxPool2S1Vec is nil: this build has no vector max-pooling.
var maxPool2S1Vec func(y, r0, r1 []float32) int

// maxPool2ArgVec is nil: this build has no vector max-pooling.
var maxPool2ArgVec func(yo []float32, ao []int32, top, bot []float32, w int, r0 int32) int
