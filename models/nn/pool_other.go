//go:build !amd64 || purego

package nn

// maxPool2S1Vec is nil: this build has no vector max-pooling.
var maxPool2S1Vec func(y, r0, r1 []float32) int
