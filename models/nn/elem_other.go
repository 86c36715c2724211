//go:build !amd64 || purego

package nn

// This build has no vector elementwise passes: the Go loops do all.

func reluFwdVec(y, x []float32) int                                       { return 0 }
func reluBackVec(dx, out, dy []float32) int                               { return 0 }
func gnNormVec(xh, out, x []float32, mean, r float64, gm, bt float32) int { return 0 }
func gnBackVec(dx, dy, xh []float32, gm, a, b float32) int                { return 0 }
func addVec(dst, a, b []float32) int                                      { return 0 }
func axpyVec(a float32, x, y []float32) int                               { return 0 }
func tanhBackVec(dx, out, dy []float32) int                               { return 0 }
