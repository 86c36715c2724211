package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dptrain/dptrain/datasets"
)

// TestTrainNPYBadInput: a broken .npy file or a malformed pair is bad input
// (exit 2), with a one-line error naming the file.
func TestTrainNPYBadInput(t *testing.T) {
	dir := t.TempDir()
	f4 := datasets.NPYType{Kind: 'f', Size: 4}
	x := append(datasets.EncodeNPYHeader(f4, false, []int{4, 2}), make([]byte, 4*8)...)
	y := append(datasets.EncodeNPYHeader(datasets.NPYType{Kind: 'u', Size: 1}, false, []int{4}), 0, 1, 0, 1)
	files := map[string][]byte{"x.npy": x, "y.npy": y, "short.npy": x[:len(x)-3], "y3.npy": y[:len(y)-1]}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := func(a, b string) string { return filepath.Join(dir, a) + "," + filepath.Join(dir, b) }
	for _, tc := range []struct{ train, test, want string }{
		{p("short.npy", "y.npy"), p("x.npy", "y.npy"), "short.npy: truncated"},
		{p("x.npy", "y3.npy"), p("x.npy", "y.npy"), "y3.npy: truncated"},
		{filepath.Join(dir, "x.npy"), p("x.npy", "y.npy"), "dataset npy needs --train FEATURES.npy,LABELS.npy"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"train", "--dataset", "npy", "--train", tc.train, "--test", tc.test, "--model", "logreg", "--steps", "1", "--quiet", "--out", filepath.Join(dir, "run")}, &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("train %s: exit %d, stderr %q; want 2 and %q", tc.train, code, errb.String(), tc.want)
		}
	}
}
