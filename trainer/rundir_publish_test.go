package trainer

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// treeOf lists every file under dir (relative, slash-separated) with its
// content.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		m[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return m
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	keys := func(m map[string]string) string {
		var k []string
		for n, v := range m {
			k = append(k, n+"="+v)
		}
		sort.Strings(k)
		return strings.Join(k, " ")
	}
	if keys(got) != keys(want) {
		t.Errorf("%s: %s\nwant %s", what, keys(got), keys(want))
	}
}

// publish replaces release/ by .staging/ whole: no file of the previous set
// stays beside the new one, whether the directories are exchanged in one
// step or renamed twice, and the first publish renames.
func TestPublishReplacesTheWholeSet(t *testing.T) {
	for _, exchange := range []string{"exchange", "two renames"} {
		t.Run(exchange, func(t *testing.T) {
			if exchange == "two renames" {
				exchangeDirs = func(a, b string) error { return errExchange }
				defer func() { exchangeDirs = exchangeDirsOS }()
			}
			root := t.TempDir()
			o := &outputs{root: root}
			writeTree(t, root, map[string]string{".staging/summary.json": "1", ".staging/model.bin": "m1"})
			if err := o.publish(); err != nil {
				t.Fatal(err)
			}
			sameTree(t, "first publish", treeOf(t, root), map[string]string{"release/summary.json": "1", "release/model.bin": "m1"})
			writeTree(t, root, map[string]string{".staging/summary.json": "2", ".staging/report.html": "r2"})
			if err := o.publish(); err != nil {
				t.Fatal(err)
			}
			sameTree(t, "second publish", treeOf(t, root), map[string]string{"release/summary.json": "2", "release/report.html": "r2"})
		})
	}
}

// A start repairs what a crash can leave: temporary files (the checkpoint's
// holds the noise seed) in private/, release/ and .work/, a half-built
// .staging/, and a release/ moved aside by an unfinished two-rename
// publish, which is put back; files that are not temporary stay.
func TestRecoverOutDirRemovesCrashLeftovers(t *testing.T) {
	kept := map[string]string{"private/checkpoint.json": "ck", ".work/metrics.jsonl": "log", ".dptrain.lock": "1"}
	for _, tc := range []struct {
		name          string
		extra, result map[string]string
	}{
		{"temporary files", map[string]string{"private/.checkpoint.json.tmp123": "seed", "release/.epsilon.png.tmp9": "png",
			"release/model.bin": "m", ".work/.metrics.jsonl.tmp4": "x", ".staging/model.bin": "half"}, map[string]string{"release/model.bin": "m"}},
		{"release moved aside", map[string]string{".release.old/model.bin": "old", ".staging/model.bin": "new"}, map[string]string{"release/model.bin": "old"}},
		{"both present", map[string]string{".release.old/model.bin": "old", "release/model.bin": "new"}, map[string]string{"release/model.bin": "new"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, kept)
			writeTree(t, dir, tc.extra)
			if err := recoverOutDir(dir); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for _, m := range []map[string]string{kept, tc.result} {
				for k, v := range m {
					want[k] = v
				}
			}
			sameTree(t, "after recovery", treeOf(t, dir), want)
		})
	}
}

// snapshotAt copies the run directory when the run reaches point#nth: what
// a SIGKILL there would leave (every write before it is complete).
func snapshotAt(t *testing.T, src, dst, point string, nth int) {
	t.Helper()
	testPointHook = func(p string, n int) {
		if p != point || n != nth {
			return
		}
		for name, body := range treeOf(t, src) {
			writeTree(t, dst, map[string]string{name: body})
		}
	}
	t.Cleanup(func() {
		testPointHook = nil
		pointMu.Lock()
		clear(pointCounts)
		pointMu.Unlock()
	})
}

// The run's settings are durable before its first step, so a run that
// crashed before any periodic checkpoint (or with checkpoint_every 0)
// resumes into the same run, bit for bit, with nothing given but the
// directory's checkpoint configuration; and a crash after the release was
// published but before the checkpoint was removed resumes to "finished",
// removing the checkpoint (issue 39, cases 1 and 4).
func TestResumeAfterCrashContinuesTheSettings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		point string
		nth   int
		every int
		ema   float64
	}{
		{"before any checkpoint", "step", 2, 7, 0},
		{"checkpoint_every 0", "step", 20, 0, 0},
		{"ema, at the final write", "final", 1, 0, 0.9},
		{"after the publish", "published", 1, 7, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := small(t)
			c.CheckpointEvery, c.EMA, c.KeepCheckpoint, c.Plots = tc.every, tc.ema, false, true
			full := c
			full.OutDir = t.TempDir()
			run(t, full, Options{})
			crash := filepath.Join(t.TempDir(), "crashed")
			snapshotAt(t, c.OutDir, crash, tc.point, tc.nth)
			run(t, c, Options{})
			testPointHook = nil
			if _, err := os.Stat(filepath.Join(crash, "private", "checkpoint.json")); err != nil {
				t.Fatalf("no checkpoint at %s#%d: %v", tc.point, tc.nth, err)
			}
			rc, err := CheckpointConfig(crash)
			if err != nil {
				t.Fatal(err)
			}
			if rc.Hash() != c.Hash() {
				t.Fatalf("the checkpoint's settings differ from the run's: %v", settingsDiff(rc, rc.Hash(), c))
			}
			_, err = Run(context.Background(), rc, Options{Resume: true})
			if tc.point == "published" {
				if !errors.Is(err, ErrFinished) {
					t.Fatalf("resume after the publish: %v, want ErrFinished", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			want, got := treeOf(t, full.OutDir), treeOf(t, crash)
			for _, name := range []string{"release/model.bin", "release/metrics.jsonl", "release/report.html", "release/epsilon.png"} {
				if !bytes.Equal([]byte(want[name]), []byte(got[name])) || want[name] == "" {
					t.Errorf("%s differs from the uninterrupted run's", name)
				}
			}
			for name := range got {
				if _, ok := want[name]; !ok {
					t.Errorf("stray %s after the resumed run", name)
				}
			}
			for name := range want {
				if _, ok := got[name]; !ok {
					t.Errorf("%s missing after the resumed run", name)
				}
			}
		})
	}
}
