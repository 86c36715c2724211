//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

//go:generate go run gen_amd64.go

//go:noescape
func kernelAVX2(k int, a *float32, sa int, b *float32, sb int, c *float32, ldc int, mode int, beta float32)

//go:noescape
func kernelAVX512(k int, a *float32, sa int, b *float32, sb int, c *float32, ldc int, mode int, beta float32)

//go:noescape
func dotAVX512(k int, a0, a1, a2, a3, b0, b1, b2, b3 *float32, tail uint64, out *float32)

func dot4x4AVX512(k int, a, b *[4]*float32, out *[16]float32) {
	dotAVX512(k, a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], 1<<(k%16)-1, &out[0])
}

var (
	// dotKernel serves only C = A·Bᵀ with A not transposed, where both
	// operands are contiguous along k and need no packing (see dotTile).
	dotKernel    = &kernel{name: "avx512-dot4x4", mr: 4, nr: 4, mc: 64, nc: 128, dot: dot4x4AVX512}
	avx2Kernel   = &kernel{name: "avx2-6x16", mr: 6, nr: 16, kc: 256, mc: 192, nc: 512, fn: kernelAVX2}
	avx512Kernel = &kernel{name: "avx512-12x32", mr: 12, nr: 32, kc: 256, mc: 192, nc: 512, fn: kernelAVX512}
)

// kernels lists the kernels this CPU can run: the dot kernel if any, then
// the packed kernels fastest first; the portable kernel is always last. x/sys/cpu reports AVX-512 and AVX only when the OS
// also saves their register state.
func kernels() []*kernel {
	var ks []*kernel
	if cpu.X86.HasAVX512F {
		ks = append(ks, dotKernel, avx512Kernel)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Kernel)
	}
	return append(ks, goKernel)
}
