//go:build !amd64 || purego

package gemm

// kernels lists the kernels this build can run: only the portable one.
func kernels() []*kernel { return []*kernel{goKernel} }

// dotKernel is the kernel for A·Bᵀ without packing; there is none here.
var dotKernel *kernel

// bf16Kernel is nil: SgemmBF16 runs its portable kernel.
var bf16Kernel bf16Func
