//go:build !amd64 || purego

package nn

// sumSq4 has no vector kernel in this build.
func sumSq4(x []float32, stride, n int, out *[4]float64) bool { return false }
