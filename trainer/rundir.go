package trainer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// lockFile is the run directory's advisory lock (lockOutDir).
const lockFile = ".dptrain.lock"

// runFiles are the files whose presence marks a directory as holding a run.
var runFiles = []string{
	filepath.Join(releaseDir, "summary.json"),
	filepath.Join(releaseDir, "model.bin"),
	filepath.Join(privateDir, "checkpoint.json"),
	filepath.Join(privateDir, "summary.json"),
}

// claimOutDir refuses to start a new run in a directory that holds
// another one, unless overwrite: then the old run's release/ and private/
// are removed first, so no file of it (a checkpoint, a model) stays beside
// the new run's.
func claimOutDir(dir string, overwrite bool) error {
	held := ""
	for _, f := range runFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			held = f
			break
		}
	}
	if held == "" {
		return nil
	}
	if !overwrite {
		return fmt.Errorf("%w: out_dir %s holds another run (%s); pass --overwrite to replace it, --resume to continue it, or choose a new --out", ErrInvalidConfig, dir, filepath.ToSlash(held))
	}
	var errs []error
	for _, d := range []string{releaseDir, privateDir, workDir, stagingDir, oldReleaseDir} {
		errs = append(errs, os.RemoveAll(filepath.Join(dir, d)))
	}
	return errors.Join(errs...)
}

// CheckpointConfig returns the configuration the run in outDir was started
// with, from its checkpoint: what a resume continues, so the caller need
// not repeat every setting. It wraps ErrNoCheckpoint when there is none.
func CheckpointConfig(outDir string) (Config, error) {
	ck, err := loadCheckpoint(filepath.Join(outDir, privateDir, "checkpoint.json"))
	if err != nil {
		return Config{}, err
	}
	cfg := ck.Config
	cfg.OutDir = outDir
	return cfg, nil
}

// runStarted reports whether a run was started in dir: it holds a run's
// directories or the lock a run takes first (checked before this run takes
// it), so a resume after a crash at any point continues that run's
// settings or refuses, never starts another.
func runStarted(dir string) bool {
	for _, d := range []string{releaseDir, privateDir, workDir, lockFile} {
		if _, err := os.Stat(filepath.Join(dir, d)); err == nil {
			return true
		}
	}
	return false
}
