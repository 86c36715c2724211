//go:build unix

package datasets

import (
	"errors"
	"os"
	"syscall"
)

// mapFile maps the first size bytes of f. MAP_PRIVATE with write access:
// the pages are the file's (page cache) until someone writes to one, which
// then gets a private copy, so an in-place transform of X neither faults
// nor changes the user's file.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, errors.New("size not mappable")
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err == nil {
		adviseMapping(m, false)
	}
	return m, err
}

func unmapFile(b []byte) error { return syscall.Munmap(b) }
