//go:build !linux && amd64 && !purego

package gemm

// requestAMX reports false: the AMX kernels are enabled on Linux only,
// where the process asks for the tile state (amx_linux_amd64.go).
func requestAMX() bool { return false }
