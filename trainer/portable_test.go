package trainer

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestRelativeTo(t *testing.T) {
	for _, tc := range []struct{ out, path, want string }{
		{"/srv/runs/a", "/srv/data/cifar10", "../../data/cifar10"},
		{"/srv/runs/a", "", ""},
		{"runs/a", "data/x.csv", "../../data/x.csv"},
		{"", "/srv/data/x.csv", "x.csv"},
		{"", "data/x.csv", "data/x.csv"},
	} {
		if got := relativeTo(tc.out, tc.path); got != tc.want {
			t.Errorf("relativeTo(%q, %q) = %q, want %q", tc.out, tc.path, got, tc.want)
		}
	}
	cfg := Default()
	cfg.OutDir, cfg.DataDir = "/srv/runs/a", "/srv/data"
	if got := releasedSummaryOf(&Summary{Notes: []string{"read /srv/data (dir)"}}, cfg); got.Config.DataDir != "../../data" || got.Notes[0] != "read ../../data (dir)" || got.Config.OutDir != "" {
		t.Fatalf("released summary keeps machine paths: data_dir %q, out_dir %q, notes %q", got.Config.DataDir, got.Config.OutDir, got.Notes)
	}
}

// absPath matches paths of a particular machine's home or work tree.
var absPath = regexp.MustCompile(`(^|[\s"'=(:])(/work/|/home/[a-z]|/root/|/Users/[A-Za-z]|C:\\Users)`)

// TestNoMachinePathsCommitted scans every committed text file: results,
// scripts, defaults and tests carry relative paths only.
func TestNoMachinePathsCommitted(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	out, err := exec.Command("git", "-C", "..", "ls-files").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		switch filepath.Ext(f) {
		case ".png", ".gz", ".bin", ".svg", ".pdf", ".jpg":
			continue
		}
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			continue // deleted in the work tree
		}
		for i, line := range strings.Split(string(b), "\n") {
			if absPath.MatchString(line) && !strings.Contains(line, "absPath") {
				t.Errorf("%s:%d: absolute machine path: %.120s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
