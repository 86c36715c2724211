//go:build !amd64 || purego

package nn

// maxPool2S1Vec is nil: this build has no vector max-pooling.
var maxPool2S1Vec func(y, r0, r1 []float32) int

// maxPool2ArgVec is nil: this build has no vector max-pooling.
var maxPool2ArgVec func(yo []float32, ao []int32, top, bot []float32, w int, r0 int32) int

// The one-call-per-channel pools have no kernel in this build.
func maxPool2S1Plane(y, x []float32, n, w, rows int) bool { return false }
func maxPool2ArgPlane(y []float32, arg []int32, x []float32, n, w, rows int, r0 int32) bool {
	return false
}
