package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// DPTRAIN_CPUPROFILE and DPTRAIN_MEMPROFILE make a command write a CPU
// and a heap profile (gzipped pprof protobufs), and a path that cannot be
// created is a warning, not a failure.
func TestCPUProfileEnv(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cpu.prof")
	mp := filepath.Join(t.TempDir(), "mem.prof")
	t.Setenv("DPTRAIN_CPUPROFILE", p)
	t.Setenv("DPTRAIN_MEMPROFILE", mp)
	var stderr bytes.Buffer
	stop := startProfile(&stderr)
	if code := run(context.Background(), []string{"privacy", "--accountant", "rdp", "--q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "1e-5"}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("privacy exited %d: %s", code, stderr.String())
	}
	stop()
	for _, path := range []string{p, mp} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Fatalf("%s is %d bytes, not gzip", path, len(b))
		}
	}
	bad := filepath.Join(t.TempDir(), "no", "such", "dir", "x.prof")
	t.Setenv("DPTRAIN_CPUPROFILE", bad)
	t.Setenv("DPTRAIN_MEMPROFILE", bad)
	stderr.Reset()
	startProfile(&stderr)()
	if !strings.Contains(stderr.String(), "CPUPROFILE: open") || !strings.Contains(stderr.String(), "MEMPROFILE: open") {
		t.Fatalf("unwritable paths: stderr %q, want two warnings", stderr.String())
	}
}
