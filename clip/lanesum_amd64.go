//go:build amd64 && !purego

package clip

import "golang.org/x/sys/cpu"

//go:noescape
func laneSumAVX2(v *float32, n int, acc *[4]float64) uint32

//go:noescape
func laneSumAVX512(v *float32, n int, acc *[4]float64) uint32

// laneSumKernels are laneSum's vector loops, narrowest first, each with
// whether this CPU runs it. The AVX-512 one converts and squares eight
// elements at a time but keeps the four float64 lanes and their order of
// additions (see lanesum_amd64.s), so both give the scalar loop's bits.
var laneSumKernels = []laneSumKernel{
	{"avx2", cpu.X86.HasAVX2, vecLaneSum(laneSumAVX2)},
	{"avx512", cpu.X86.HasAVX512F && cpu.X86.HasAVX2, vecLaneSum(laneSumAVX512)},
}

func vecLaneSum(f func(v *float32, n int, acc *[4]float64) uint32) func(v []float32, acc *[4]float64) uint32 {
	return func(v []float32, acc *[4]float64) uint32 {
		if len(v) < 4 {
			return 0
		}
		return f(&v[0], len(v)&^3, acc)
	}
}

// laneSumVec is laneSum's 4-wide loop over v (len a multiple of 4) into
// acc, returning max |v| as float32 bits: the widest kernel this CPU runs,
// nil without AVX2.
var laneSumVec = func() func(v []float32, acc *[4]float64) uint32 {
	var f func(v []float32, acc *[4]float64) uint32
	for _, k := range laneSumKernels {
		if k.ok {
			f = k.fn
		}
	}
	return f
}()
