package datasets

import (
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
	status := func() error {
		for _, f := range List(opts) {
			if f.Name == "fashion-mnist" {
				return f.Err
			}
		}
		t.Fatal("fashion-mnist not listed")
		return nil
	}
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
