package trainer

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeFileAtomic writes data to path through a temporary file in the same
// directory, synced and renamed, so path never holds a half-written file.
// Outputs are ordinary files (0644), except in a run's private/: 0600,
// whatever writes them (plots included).
func writeFileAtomic(path string, data []byte) error {
	if filepath.Base(filepath.Dir(path)) == privateDir {
		return writeFileAtomicMode(path, data, 0o600)
	}
	return writeFileAtomicMode(path, data, 0o644)
}

// writeFileAtomicMode is writeFileAtomic with the final file mode perm
// (0600 for private state such as checkpoints).
func writeFileAtomicMode(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	point := filepath.Base(dir) + "/" + filepath.Base(path)
	half := len(data) / 2
	if _, err := f.Write(data[:half]); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	writePoint("half:" + point)
	if _, err := f.Write(data[half:]); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	// CreateTemp makes the file 0600.
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	writePoint("rename:" + point)
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	return syncDir(dir) // the rename itself survives a power loss
}

// syncDir makes the entries of dir (files created, renamed or removed in
// it) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
