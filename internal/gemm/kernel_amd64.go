//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

//go:generate go run gen_amd64.go

//go:noescape
func kernelAVX2(k int, a *float32, sa int, b *float32, sb int, c *float32, ldc int)

//go:noescape
func kernelAVX512(k int, a *float32, sa int, b *float32, sb int, c *float32, ldc int)

var (
	avx2Kernel   = &kernel{name: "avx2-6x16", mr: 6, nr: 16, kc: 256, mc: 192, nc: 512, fn: kernelAVX2}
	avx512Kernel = &kernel{name: "avx512-12x32", mr: 12, nr: 32, kc: 256, mc: 192, nc: 512, fn: kernelAVX512}
)

// kernels lists the kernels this CPU can run, fastest first; the portable
// kernel is always last. x/sys/cpu reports AVX-512 and AVX only when the OS
// also saves their register state.
func kernels() []*kernel {
	var ks []*kernel
	if cpu.X86.HasAVX512F {
		ks = append(ks, avx512Kernel)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, avx2Kernel)
	}
	return append(ks, goKernel)
}
