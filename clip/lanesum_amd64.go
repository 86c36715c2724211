//go:build amd64 && !purego

package clip

import "golang.org/x/sys/cpu"

//go:noescape
func laneSumAVX2(v *float32, n int, acc *[4]float64) uint32

// laneSumVec is laneSum's 4-wide loop over v (len a multiple of 4) into
// acc, returning max |v| as float32 bits; nil without AVX2.
var laneSumVec = func() func(v []float32, acc *[4]float64) uint32 {
	if !cpu.X86.HasAVX2 {
		return nil
	}
	return func(v []float32, acc *[4]float64) uint32 {
		if len(v) < 4 {
			return 0
		}
		return laneSumAVX2(&v[0], len(v)&^3, acc)
	}
}()
