//go:build linux && amd64 && !purego

package gemm

import "syscall"

// requestAMX asks Linux for this process's permission to use the AMX tile
// data (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA; Linux 5.16 and
// later). Without it the first tile instruction faults. Every thread of
// the process may then use the tiles; the kernel saves them with the rest
// of the vector state on context switches and signals, and the AMX kernels
// make no calls between loading the tile configuration and releasing it.
func requestAMX() bool {
	const archReqXcompPerm, xfeatureXtiledata = 0x1023, 18
	_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0)
	return errno == 0
}
