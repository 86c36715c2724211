//go:build !amd64 || purego

package gemm

// kernels lists the kernels this build can run: only the portable one.
func kernels() []*kernel { return []*kernel{goKernel} }

// dotKernel is the kernel for A·Bᵀ without packing; there is none here.
var dotKernel *kernel

// bf16Kernel is nil: SgemmBF16 runs its portable kernel.
var bf16Kernel bf16Func

// This build has no vector packing.
const bf16AsmPack = false

func packRowsVec(dst []uint32, src []float32, ld, k, c0, nv, nr int) {
	panic("gemm: no vector packing")
}
func packAdjVec(dst []uint32, src []float32, ld, k, r0, nv, nr int) { panic("gemm: no vector packing") }

// amxKernels are nil: no AMX here.
var amxKernels amxSet

func packRowVec(dst []uint32, src []float32, k int) { panic("gemm: no vector packing") }

func packAMXATrans(dst []uint32, ld int, a []float32, lda, k, i0, mv int, tmp *[]uint32) {
	panic("gemm: no vector packing")
}
