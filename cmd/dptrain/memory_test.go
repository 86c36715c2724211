package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Sizes that imply more memory than the machine has are refused before
// allocation, exit 2, with the estimate and the size as given. Before,
// train --hidden 2000000000 and report --synthetic --d 1e9 died with
// "fatal error: runtime: out of memory" and a stack dump, and audit
// --canaries 1e8 grew to 12.7 GB. The sizes here exceed any machine (the
// audit's 1e10 canaries: 2.3 TiB), so the test does not depend on this
// one's memory.
func TestMemoryRefusedBeforeAllocation(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"train", "--quiet", "--model", "mlp", "--hidden", "2000000000", "--out", filepath.Join(dir, "h")},
			[]string{"hidden widths [2000000000]", "needs about", "TiB of memory", "is available"}},
		{[]string{"train", "--quiet", "--model", "mlp", "--hidden", "64", "--max-physical-batch", "1e12", "--out", filepath.Join(dir, "b")},
			[]string{"physical batch of 1000000000000", "needs about"}},
		{[]string{"train", "--quiet", "--model", "cnn", "--max-physical-batch", "1e12", "--out", filepath.Join(dir, "c")},
			[]string{"model mnistcnn", "physical batch of 1000000000000 needs about"}},
		{[]string{"sweep", "--model", "mlp", "--grid", "hidden=2000000000", "--steps", "2"},
			[]string{"every run failed", "hidden widths [2000000000]", "needs about"}},
		{[]string{"report", "--synthetic", "--d", "1e9"},
			[]string{"report --synthetic --n 1000 --d 1000000000 needs about", "EiB of memory"}},
		{[]string{"audit", "--quiet", "--canaries", "1e10", "--model", "logreg", "--out", filepath.Join(dir, "a")},
			[]string{"an audit with 10000000000 canaries needs about 2.33 TiB"}},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr %q", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, stderr, w)
			}
		}
	}
}
