//go:build !amd64 || purego

package mask

// addClampedMaskedWords is nil: this build has no vector kernel.
var addClampedMaskedWords func(dst, src []float32, words []uint64, s, c float32)
