//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The crash tests run the test binary as dptrain (TestMain) and stop it at
// named write points with DPTRAIN_STALL_AT (trainer/writepoint.go,
// docs/architecture.md#crash-testing), then kill it there with SIGKILL.

// crashArgs is a short seeded run: tiny data and model, continuous noise,
// a checkpoint every few steps, evaluation and plots, so that kills land in
// steps, checkpoint writes and the final release alike.
var crashArgs = []string{"train", "--dataset", "synthetic", "--train-limit", "1000", "--test-limit", "200",
	"--model", "logreg", "--batch", "50", "--steps", "24", "--sigma", "4", "--epsilon", "0", "--seed", "7",
	"--noise", "continuous", "--checkpoint-every", "4", "--eval-every", "6", "--plots", "--quiet"}

// dptrainProc is one dptrain process started by a crash test.
type dptrainProc struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stalled chan string // the "stalled at" line, once
	done    chan struct{}
	mu      sync.Mutex
	stderr  bytes.Buffer
	stdout  bytes.Buffer
	code    int
}

// startDptrain starts dptrain with args; stall, when not "", is its
// DPTRAIN_STALL_AT.
func startDptrain(t *testing.T, stall string, args ...string) *dptrainProc {
	t.Helper()
	p := &dptrainProc{stalled: make(chan string, 1), done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], args...)
	p.cmd.Env = append(os.Environ(), asBinaryEnv+"=1", "DPTRAIN_STALL_AT="+stall)
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout = &lockedWriter{mu: &p.mu, w: &p.stdout}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(line + "\n")
			p.mu.Unlock()
			if strings.HasPrefix(line, "dptrain: stalled at ") {
				p.stalled <- line
			}
		}
		err := p.cmd.Wait()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			p.code = ee.ExitCode()
		case err != nil:
			p.code = -2
		}
		close(p.done)
	}()
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// waitStallOrExit reports whether p stalled (true) or exited (false).
func (p *dptrainProc) waitStallOrExit(t *testing.T) bool {
	t.Helper()
	select {
	case <-p.stalled:
		return true
	case <-p.done:
		return false
	case <-time.After(2 * time.Minute):
		p.cmd.Process.Kill()
		t.Fatalf("dptrain %v neither stalled nor ended; stderr:\n%s", p.cmd.Args[1:], p.errText())
		return false
	}
}

func (p *dptrainProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

// wait lets a stalled p go on and returns its exit code.
func (p *dptrainProc) wait() int {
	p.stdin.Close()
	<-p.done
	return p.code
}

func (p *dptrainProc) errText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (p *dptrainProc) outText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String()
}

// runDptrain runs dptrain to its end and returns exit code, stdout, stderr.
func runDptrain(t *testing.T, stall string, args ...string) (int, string, string) {
	t.Helper()
	p := startDptrain(t, stall, args...)
	code := p.wait()
	return code, p.outText(), p.errText()
}

func withOut(args []string, out string, extra ...string) []string {
	return append(append(slices.Clone(args), "--out", out), extra...)
}

// dirFiles maps every regular file under dir (hidden ones included) to its
// bytes, by slash-separated relative path.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		b, err := os.ReadFile(path)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return files
}

func fileNames(m map[string][]byte) []string {
	var names []string
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// releaseOf is the release/ part of files, keyed by name inside release/.
func releaseOf(files map[string][]byte) map[string][]byte {
	rel := map[string][]byte{}
	for n, b := range files {
		if name, ok := strings.CutPrefix(n, "release/"); ok {
			rel[name] = b
		}
	}
	return rel
}

// sameBytes names the files of want that got lacks or holds differently,
// and the files got has beyond want.
func sameBytes(want, got map[string][]byte) []string {
	var bad []string
	for _, n := range fileNames(want) {
		if g, ok := got[n]; !ok {
			bad = append(bad, n+" missing")
		} else if !bytes.Equal(g, want[n]) {
			bad = append(bad, n+" differs")
		}
	}
	for _, n := range fileNames(got) {
		if _, ok := want[n]; !ok {
			bad = append(bad, n+" stray")
		}
	}
	return bad
}

// sameRun compares a finished run directory with the uninterrupted run's:
// the same files everywhere under --out, and release/ byte for byte (the
// lock file holds a pid, private/summary.json the wall time).
func sameRun(want, got map[string][]byte) []string {
	bad := sameBytes(releaseOf(want), releaseOf(got))
	for i := range bad {
		bad[i] = "release/" + bad[i]
	}
	if w, g := fileNames(want), fileNames(got); !slices.Equal(w, g) {
		bad = append(bad, fmt.Sprintf("files %v, want %v", g, w))
	}
	return bad
}

// crashReference runs crashArgs uninterrupted (listing its write points)
// and returns its files and the points it reached, in order.
func crashReference(t *testing.T) (map[string][]byte, []string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ref")
	code, stdout, stderr := runDptrain(t, "list", withOut(crashArgs, out)...)
	if code != 0 || !strings.Contains(stdout, "result") {
		t.Fatalf("uninterrupted run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var points []string
	for _, line := range strings.Split(stderr, "\n") {
		if p, ok := strings.CutPrefix(line, "dptrain: write point "); ok {
			points = append(points, p)
		}
	}
	ref := dirFiles(t, out)
	for _, want := range []string{"release/model.bin", "release/metrics.jsonl", "release/summary.json", "release/report.html", "release/epsilon.png"} {
		if _, ok := ref[want]; !ok {
			t.Fatalf("the uninterrupted run wrote no %s: %v", want, fileNames(ref))
		}
	}
	return ref, points
}

// TestCrashConsistency kills a seeded run with SIGKILL at about 30 points
// chosen by a seeded draw (steps, checkpoint writes half done or not yet
// renamed, the settings written before the first step, every file of the
// final release, the publish), resumes it each time until it finishes, and
// checks that it ends byte-identical to the uninterrupted run, with no file
// more or less anywhere under --out; and that after every kill release/ is
// either absent or the complete final set (issue 39, cases 4, 8, 9).
func TestCrashConsistency(t *testing.T) {
	if testing.Short() {
		t.Skip("starts about 80 dptrain processes")
	}
	ref, points := crashReference(t)
	refRelease := releaseOf(ref)
	// Points in every part of the run first, then a seeded draw of the rest.
	must := []string{"step#1", "half:private/checkpoint.json#1", "rename:private/checkpoint.json#1",
		"half:private/checkpoint.json#3", "rename:private/checkpoint.json#4", "final#1", "half:.staging/model.bin#1",
		"rename:.staging/summary.json#1", "half:.staging/report.html#1", "rename:.staging/epsilon.png#1", "publish#1", "published#1"}
	for _, m := range must {
		if !slices.Contains(points, m) {
			t.Fatalf("the run never reaches write point %s (it reached %v)", m, points)
		}
	}
	r := rand.New(rand.NewPCG(39, 1))
	pick := func() string { return points[r.IntN(len(points))] }
	const wantKills = 30
	kills, trials, refusals := 0, 0, 0
	var outcomes []string
	for kills < wantKills {
		trials++
		out := filepath.Join(t.TempDir(), fmt.Sprintf("trial%d", trials))
		first := pick()
		if len(must) > 0 {
			first, must = must[0], must[1:]
		}
		chain := []string{first, pick()} // the first process, then a resumed one
		// Killed while its settings were not yet durable (the checkpoint
		// before step 1 half written, or written and not renamed): the
		// resume must refuse, with exit 2 and the way out.
		beforeSettings := strings.HasSuffix(first, ":private/checkpoint.json#1")
		for i, point := range chain {
			args := withOut(crashArgs, out)
			if i > 0 {
				args = []string{"train", "--resume", "--out", out, "--quiet"}
			}
			p := startDptrain(t, point, args...)
			if !p.waitStallOrExit(t) {
				refused := p.code == 2 && strings.Contains(p.errText(), "wrote no checkpoint")
				if i == 0 || p.code != 0 && !refused {
					t.Fatalf("trial %d: %v did not reach %s: exit %d\n%s", trials, args, point, p.code, p.errText())
				}
				break // the resumed run finished (or was refused) before reaching it
			}
			p.kill(t)
			kills++
			outcomes = append(outcomes, point)
			// release/ is published whole: absent, or the final set.
			if rel := releaseOf(dirFiles(t, out)); len(rel) > 0 {
				if bad := sameBytes(refRelease, rel); len(bad) > 0 {
					t.Fatalf("trial %d: killed at %s, release/ is a mixture: %v", trials, point, bad)
				}
			}
		}
		// Resume until it finishes.
		refused := false
		for attempt := 0; ; attempt++ {
			code, stdout, stderr := runDptrain(t, "", "train", "--resume", "--out", out, "--quiet")
			if code == 0 {
				break
			}
			// Killed before its settings were durable: refused with exit 2 and
			// the way out, which is to start it again with --overwrite.
			if code == 2 && strings.Contains(stderr, "wrote no checkpoint") && strings.Contains(stderr, "--overwrite") && attempt == 0 && beforeSettings {
				refusals, refused = refusals+1, true
				if code, stdout, stderr = runDptrain(t, "", withOut(crashArgs, out, "--overwrite")...); code == 0 {
					break
				}
			}
			t.Fatalf("trial %d (killed at %v): resume: exit %d\n%s\n%s", trials, chain, code, stdout, stderr)
		}
		if beforeSettings && !refused {
			t.Fatalf("trial %d (killed at %v): resumed although the settings were never durable", trials, chain)
		}
		if bad := sameRun(ref, dirFiles(t, out)); len(bad) > 0 {
			t.Fatalf("trial %d (killed at %v): the finished run differs from the uninterrupted one: %v", trials, chain, bad)
		}
	}
	t.Logf("%d SIGKILLs in %d trials (at %s); every trial resumed to a run byte-identical to the uninterrupted one, no stray file; %d resume(s) refused with exit 2 (killed before the settings were durable) and completed with --overwrite",
		kills, trials, strings.Join(outcomes, ", "), refusals)
}

// TestConcurrentWriterRefused: while a run is live on --out, a second
// train, a --resume and an --overwrite are refused with exit 2 naming the
// live process, and the live run's files are untouched; it then finishes
// as if alone (issue 39, case 2).
func TestConcurrentWriterRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dptrain processes")
	}
	out := filepath.Join(t.TempDir(), "run")
	live := startDptrain(t, "step#6", withOut(crashArgs, out)...)
	if !live.waitStallOrExit(t) {
		t.Fatalf("the live run ended early: exit %d\n%s", live.code, live.errText())
	}
	before := dirFiles(t, out)
	pid := fmt.Sprintf("in use by process %d", live.cmd.Process.Pid)
	for _, extra := range [][]string{nil, {"--resume"}, {"--overwrite"}} {
		code, _, stderr := runDptrain(t, "", withOut(crashArgs, out, extra...)...)
		if code != 2 || !strings.Contains(stderr, pid) {
			t.Errorf("train %v on a live --out: exit %d, %q; want 2 naming the pid (%s)", extra, code, stderr, pid)
		}
	}
	if bad := sameBytes(before, dirFiles(t, out)); len(bad) > 0 {
		t.Errorf("the refused writers changed the live run's files: %v", bad)
	}
	if code := live.wait(); code != 0 {
		t.Fatalf("the live run: exit %d\n%s", code, live.errText())
	}
	ref, _ := crashReference(t)
	if bad := sameRun(ref, dirFiles(t, out)); len(bad) > 0 {
		t.Errorf("the live run differs from an undisturbed one: %v", bad)
	}
}

// TestFullDiskDuringFinalWrite runs with --checkpoint-every 0 on a small
// tmpfs, fills it when training is over and before the final write: the
// run fails without printing a result, leaves release/ absent, no
// temporary file and its settings checkpoint, and resumes (once space is
// free) to the uninterrupted run's model and records (issue 39, case 9).
// It needs to mount a tmpfs (root with CAP_SYS_ADMIN) and skips otherwise.
func TestFullDiskDuringFinalWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts dptrain processes")
	}
	mnt := t.TempDir()
	if o, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root with CAP_SYS_ADMIN): %v %s", err, bytes.TrimSpace(o))
	}
	t.Cleanup(func() {
		if o, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, o)
		}
	})
	out := filepath.Join(mnt, "run")
	args := withOut(crashArgs, out, "--checkpoint-every", "0")
	p := startDptrain(t, "final", args...)
	if !p.waitStallOrExit(t) {
		t.Fatalf("the run ended before its final write: exit %d\n%s", p.code, p.errText())
	}
	filler := filepath.Join(mnt, "filler")
	fillDisk(t, filler)
	code := p.wait()
	stdout, stderr := p.outText(), p.errText()
	if code != 1 || !strings.Contains(stderr, "no space left on device") || !strings.Contains(stderr, "the run failed after 24 of 24 steps") {
		t.Fatalf("full disk at the final write: exit %d, stderr %q; want 1, the disk error and the steps charged", code, stderr)
	}
	if strings.Contains(stdout, "result") || strings.Contains(stdout, "privacy") || strings.Contains(stdout, "publish") {
		t.Errorf("success lines printed for a run whose outputs failed:\n%s", stdout)
	}
	files := dirFiles(t, out)
	for n := range files {
		if strings.Contains(filepath.Base(n), ".tmp") || strings.HasPrefix(n, "release/") || strings.HasPrefix(n, ".staging/") {
			t.Errorf("a failed final write left %s", n)
		}
	}
	if _, ok := files["private/checkpoint.json"]; !ok {
		t.Errorf("no checkpoint to resume from: %v", fileNames(files))
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runDptrain(t, "", "train", "--resume", "--out", out, "--quiet"); code != 0 || !strings.Contains(stdout, "result") {
		t.Fatalf("resume after freeing space: exit %d\n%s\n%s", code, stdout, stderr)
	}
	ref, _ := crashReference(t)
	got := dirFiles(t, out)
	for _, n := range []string{"release/model.bin", "release/metrics.jsonl"} {
		if !bytes.Equal(got[n], ref[n]) {
			t.Errorf("%s differs from the uninterrupted run's", n)
		}
	}
	if w, g := fileNames(ref), fileNames(got); !slices.Equal(w, g) {
		t.Errorf("files %v, want %v", g, w)
	}
}

// fillDisk writes path until the file system is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}
