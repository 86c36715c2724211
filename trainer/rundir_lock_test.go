//go:build unix

package trainer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A live run directory is locked: a second train, --resume or --overwrite
// on it is refused, naming the process (issue 39, case 2).
func TestOutDirLockRefusesASecondWriter(t *testing.T) {
	c := small(t)
	unlock, err := lockOutDir(c.OutDir) // this process plays the live run
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{}, {Resume: true}, {Overwrite: true}} {
		_, err := Run(context.Background(), c, o)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), fmt.Sprintf("in use by process %d", os.Getpid())) {
			t.Errorf("%+v on a live directory: %v", o, err)
		}
	}
	unlock()
	run(t, c, Options{}) // free again
}

// --resume never overwrites a finished run whose summary is missing, nor
// starts the default job in a directory whose run wrote no checkpoint
// (issue 39, cases 1 and 4): both are refused with the way out.
func TestResumeNeverOverwritesOrStartsAnotherRun(t *testing.T) {
	c := small(t)
	c.KeepCheckpoint = false
	run(t, c, Options{})
	model := readFile(t, filepath.Join(c.OutDir, "release", "model.bin"))
	if err := os.Remove(filepath.Join(c.OutDir, "release", "summary.json")); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), c, Options{Resume: true})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "--overwrite") {
		t.Errorf("resume of a finished run without its summary: %v", err)
	}
	if !bytes.Equal(model, readFile(t, filepath.Join(c.OutDir, "release", "model.bin"))) {
		t.Fatal("model.bin was overwritten")
	}

	// A run killed before its first checkpoint: empty release/ and private/.
	d := small(t)
	for _, sub := range []string{"release", "private"} {
		if err := os.MkdirAll(filepath.Join(d.OutDir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	_, err = Run(context.Background(), d, Options{Resume: true})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "wrote no checkpoint") {
		t.Errorf("resume of a run with no checkpoint: %v", err)
	}
	// A fresh directory: --resume starts the run.
	e := small(t)
	run(t, e, Options{Resume: true})
}
