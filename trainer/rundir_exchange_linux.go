//go:build linux

package trainer

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// exchangeDirsOS swaps a and b with renameat2(RENAME_EXCHANGE): one atomic
// step, so the path b names a complete directory at every instant.
func exchangeDirsOS(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ENOTSUP) {
		return fmt.Errorf("%w: %v", errExchange, err)
	}
	if err != nil {
		return fmt.Errorf("exchange %s and %s: %w", a, b, err)
	}
	return nil
}
