package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// DPTRAIN_CPUPROFILE makes a command write a CPU profile (a gzipped pprof
// protobuf), and a path that cannot be created is a warning, not a failure.
func TestCPUProfileEnv(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cpu.prof")
	t.Setenv("DPTRAIN_CPUPROFILE", p)
	var stderr bytes.Buffer
	stop := startProfile(&stderr)
	if code := run(context.Background(), []string{"privacy", "--accountant", "rdp", "--q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "1e-5"}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("privacy exited %d: %s", code, stderr.String())
	}
	stop()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile is %d bytes, not gzip", len(b))
	}
	t.Setenv("DPTRAIN_CPUPROFILE", filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.prof"))
	stderr.Reset()
	startProfile(&stderr)()
	if !strings.Contains(stderr.String(), "not profiling") {
		t.Fatalf("unwritable path: stderr %q, want a warning", stderr.String())
	}
}
