//go:build amd64 && !purego

package gemm

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestRowsKernelsMatchAVX2 checks that kernelAVX2r1…r5 give, bit for bit,
// the first rows of what kernelAVX2 gives on the same strips, in the set and
// add modes tile uses them in.
func TestRowsKernelsMatchAVX2(t *testing.T) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		t.Skip("no AVX2+FMA")
	}
	rnd := rand.New(rand.NewPCG(7, 8))
	const k, ldc = 37, 20
	a, b := make([]float32, 6*k), make([]float32, 16*k)
	for i := range a {
		a[i] = rnd.Float32()*2 - 1
	}
	for i := range b {
		b[i] = rnd.Float32()*2 - 1
	}
	c0 := make([]float32, 6*ldc)
	for i := range c0 {
		c0[i] = rnd.Float32()
	}
	for r := 1; r < 6; r++ {
		for _, mode := range []int{modeSet, modeAdd} {
			want, got := append([]float32(nil), c0...), append([]float32(nil), c0...)
			kernelAVX2(k, &a[0], 6, &b[0], 16, &want[0], ldc, mode, 0)
			avx2Kernel.rowsFn[r](k, &a[0], 6, &b[0], 16, &got[0], ldc, mode, 0)
			for i := range got {
				w := want[i]
				if i >= r*ldc {
					w = c0[i] // rows past r untouched
				}
				if math.Float32bits(got[i]) != math.Float32bits(w) {
					t.Fatalf("%d rows, mode %d: C[%d] = %g, want %g", r, mode, i, got[i], w)
				}
			}
		}
	}
}
