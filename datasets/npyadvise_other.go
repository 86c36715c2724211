//go:build !linux

package datasets

// adviseMapping is a no-op where madvise is not in package syscall.
func adviseMapping([]byte, bool) {}
