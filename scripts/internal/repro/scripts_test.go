package repro

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// accountantOnly are the scripts whose --quick mode needs no data and no
// training; TestScripts runs their shell wrappers end to end.
var accountantOnly = map[string]bool{
	"hidden_state.sh":  true,
	"twice_noise.sh":   true,
	"srdp_figures.sh":  true,
	"pdp_synthetic.sh": true,
}

// TestScripts checks every scripts/NAME.sh: it parses (bash -n), it runs a Go
// program that exists under scripts/internal (or cmd/dptrain), scripts/README.md
// lists it, and — outside -short — the accountant-only ones run in --quick
// mode through the wrapper itself and write a CSV, a PNG or SVG plot and a
// markdown table.
func TestScripts(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := filepath.Glob(filepath.Join(root, "scripts", "*.sh"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts found under %s/scripts: %v", root, err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "scripts", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not on PATH")
	}
	goRun := regexp.MustCompile(`go (?:run|build -o \S+) \./(scripts/internal/[a-z0-9]+|cmd/dptrain)`)
	seen := map[string]bool{}
	for _, path := range scripts {
		name := filepath.Base(path)
		seen[name] = true
		if !strings.Contains(string(readme), "| `"+name+"` |") {
			t.Errorf("scripts/README.md has no table row for %s", name)
		}
		if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
			t.Errorf("%s does not parse: %v\n%s", name, err, out)
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ms := goRun.FindAllStringSubmatch(string(src), -1)
		if len(ms) == 0 {
			t.Errorf("%s runs no Go program", name)
		}
		for _, m := range ms {
			if st, err := os.Stat(filepath.Join(root, m[1])); err != nil || !st.IsDir() {
				t.Errorf("%s runs ./%s, which does not exist", name, m[1])
			}
		}
	}
	for name := range accountantOnly {
		if !seen[name] {
			t.Errorf("accountant-only script %s is missing", name)
		}
	}
	if testing.Short() {
		return
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the wrappers call `go run`, and go is not on PATH")
	}
	for _, path := range scripts {
		name := filepath.Base(path)
		if !accountantOnly[name] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cmd := exec.Command("bash", path, "--quick", "--out", out)
			cmd.Dir = root
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s --quick: %v\n%s", name, err, b)
			}
			kinds := map[string]int{}
			filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if st, e := d.Info(); e == nil && st.Size() > 0 {
						kinds[filepath.Ext(p)]++
					}
				}
				return nil
			})
			if kinds[".csv"] == 0 || kinds[".md"] == 0 || kinds[".png"]+kinds[".svg"] == 0 {
				t.Errorf("%s --quick wrote %v, want a CSV, a markdown table and a PNG/SVG plot", name, kinds)
			}
		})
	}
}
