package trainer

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The run directory is a transaction (docs/architecture.md#the-run-directory-is-a-transaction):
//
//	OUT/.work/        the released records of the run in progress
//	                  (metrics.jsonl, appended each step), not yet published
//	OUT/.staging/     the next release/, written whole at the end of a run
//	OUT/.release.old  the previous release/ during a two-rename publish
//	                  (only where the directories cannot be exchanged)
//
// release/ changes in one step: .staging/ is exchanged with it (renameat2
// RENAME_EXCHANGE), or renamed to it when there is none yet, so it holds
// the previous complete set or the new one, never a mixture.
const (
	workDir       = ".work"
	stagingDir    = ".staging"
	oldReleaseDir = ".release.old"
)

// exchangeDirs swaps the directories a and b atomically; errExchange
// (wrapped) when the platform or file system cannot (publishDir then falls
// back to two renames).
var exchangeDirs = exchangeDirsOS

var errExchange = errors.New("directories cannot be exchanged here")

// publish makes .staging/ the run's release/ in one step and removes the
// set it replaces.
func (o *outputs) publish() error {
	if err := syncDir(o.staging("")); err != nil {
		return err
	}
	writePoint("publish")
	rel, stage := o.release(""), o.staging("")
	if _, err := os.Lstat(rel); errors.Is(err, os.ErrNotExist) {
		if err := os.Rename(stage, rel); err != nil {
			return fmt.Errorf("publish release/: %w", err)
		}
	} else if err := exchangeDirs(stage, rel); errors.Is(err, errExchange) {
		// Two renames: a crash between them leaves .release.old and no
		// release/, which the next start puts back (recoverOutDir).
		old := filepath.Join(o.root, oldReleaseDir)
		if err := os.Rename(rel, old); err != nil {
			return fmt.Errorf("publish release/: %w", err)
		}
		if err := os.Rename(stage, rel); err != nil {
			return errors.Join(fmt.Errorf("publish release/: %w", err), os.Rename(old, rel))
		}
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("publish release/: remove the previous set: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("publish release/: %w", err)
	}
	if err := syncDir(o.root); err != nil {
		return err
	}
	writePoint("published")
	// After an exchange, .staging/ holds the previous set.
	if err := os.RemoveAll(stage); err != nil {
		return fmt.Errorf("publish release/: remove the previous set: %w", err)
	}
	return nil
}

// restage starts a .staging/ holding a copy of the published release/, to
// be changed and published whole (after recoverOutDir's repairs).
func (o *outputs) restage() error {
	if err := recoverOutDir(o.root); err != nil {
		return err
	}
	ents, err := os.ReadDir(o.release(""))
	if err != nil {
		return fmt.Errorf("out_dir: %w", err)
	}
	if err := os.Mkdir(o.staging(""), 0o755); err != nil {
		return fmt.Errorf("out_dir: %w", err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(o.staging(e.Name()), o.release(e.Name()), 0o644); err != nil {
			os.RemoveAll(o.staging(""))
			return fmt.Errorf("out_dir: %w", err)
		}
	}
	return nil
}

// recoverOutDir repairs what a crash (SIGKILL, power loss) can leave in a
// run directory, before a run uses it, under its lock: a release/ moved
// aside by an unfinished two-rename publish is put back; a half-built
// .staging/ is removed; every temporary file of an atomic write is removed,
// in private/ (a checkpoint's holds the noise seed), release/ and .work/.
func recoverOutDir(dir string) error {
	rel, old := filepath.Join(dir, releaseDir), filepath.Join(dir, oldReleaseDir)
	if _, err := os.Lstat(old); err == nil {
		if _, err := os.Lstat(rel); errors.Is(err, os.ErrNotExist) {
			if err := os.Rename(old, rel); err != nil {
				return fmt.Errorf("out_dir %s: restore release/: %w", dir, err)
			}
		} else if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("out_dir %s: %w", dir, err)
		}
	}
	if err := os.RemoveAll(filepath.Join(dir, stagingDir)); err != nil {
		return fmt.Errorf("out_dir %s: %w", dir, err)
	}
	for _, sub := range []string{privateDir, releaseDir, workDir} {
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("out_dir %s: %w", dir, err)
		}
		for _, e := range ents {
			if isAtomicTemp(e.Name()) {
				if err := os.Remove(filepath.Join(dir, sub, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("out_dir %s: remove a temporary file left by a crash: %w", dir, err)
				}
			}
		}
	}
	return nil
}

// isAtomicTemp reports whether name is a temporary file of
// writeFileAtomicMode (".NAME.tmp" and a random suffix).
func isAtomicTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp")
}

// copyFile copies src to dst (created with perm) and syncs it.
func copyFile(dst, src string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return fmt.Errorf("sync %s: %w", dst, err)
	}
	return out.Close()
}
