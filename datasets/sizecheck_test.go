package datasets

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A truncated uncompressed IDX file passes the header probe but not the
// size check 'data list' runs.
func TestListReportsTruncatedFile(t *testing.T) {
	dir := t.TempDir()
	fm := filepath.Join(dir, "fashion-mnist")
	writeIDXDir(t, fm, 3, 2, false)
	opts := Options{Dir: dir, NoEnv: true, NoSystem: true, NoEmbedded: true}
	status := func() error { return fashionStatus(t, opts) }
	if err := status(); err != nil {
		t.Fatalf("intact copy: %v", err)
	}
	p := filepath.Join(fm, "train-images-idx3-ubyte")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b[:len(b)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := status(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d bytes, want %d", len(b)-5, len(b))) {
		t.Fatalf("truncated copy: %v, want a size error", err)
	}
}

// A gzip-compressed copy passes whatever its compression (Debian's files are
// recompressed, so their size differs from upstream's), and a truncated one
// fails on its trailer.
func TestListChecksGzipTrailer(t *testing.T) {
	dir := t.TempDir()
	fm := filepath.Join(dir, "fashion-mnist")
	writeIDXDir(t, fm, 300, 20, true)
	opts := Options{Dir: dir, NoEnv: true, NoSystem: true, NoEmbedded: true}
	status := func() error { return fashionStatus(t, opts) }
	p := filepath.Join(fm, "train-images-idx3-ubyte.gz")
	raw := idxBytes([]int{300, 2, 3}, tinyImages(300, 2, 3))
	for _, level := range []int{gzip.NoCompression, gzip.BestSpeed, gzip.BestCompression} {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, level)
		zw.Write(raw)
		zw.Close()
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := status(); err != nil {
			t.Fatalf("gzip level %d (%d bytes): %v", level, buf.Len(), err)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, 4, 9, len(b) / 2} {
		if err := os.WriteFile(p, b[:len(b)-cut], 0o644); err != nil {
			t.Fatal(err)
		}
		if err := status(); err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("cut %d bytes: %v, want a truncation error", cut, err)
		}
	}
}

// fashionStatus is the status 'data list' gives the fashion-mnist copy.
func fashionStatus(t *testing.T, opts Options) error {
	t.Helper()
	for _, f := range List(opts) {
		if f.Name == "fashion-mnist" {
			return f.Err
		}
	}
	t.Fatal("fashion-mnist not listed")
	return nil
}
