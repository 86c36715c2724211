//go:build unix

package trainer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockOutDir takes the run directory's advisory lock (flock on
// DIR/.dptrain.lock) for the run's life, so that a second train, --resume
// or --overwrite on a live directory is refused, naming the process that
// holds it. The lock goes with the process (a crash releases it); the file
// stays, holding the last holder's pid.
func lockOutDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("out_dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("out_dir %s: lock: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := strings.TrimSpace(string(b))
			if _, perr := strconv.Atoi(holder); perr != nil {
				holder = "another process"
			} else {
				holder = "process " + holder
			}
			return nil, fmt.Errorf("%w: out_dir %s is in use by %s (a live run); wait for it to end, stop it, or choose another --out", ErrInvalidConfig, dir, holder)
		}
		return nil, fmt.Errorf("out_dir %s: lock: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
