package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The quick run trains the five variants at ε = 4 and reports their noise
// ratios against the baseline (100% for the baseline itself).
func TestQuickRun(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 5 small models")
	}
	out := t.TempDir()
	if err := run(true, out, "", "", "cnn", 0, ""); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "twice_accuracy.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(md)
	if strings.Contains(text, "failed") {
		t.Fatalf("a variant failed:\n%s", text)
	}
	if !strings.Contains(text, "| 4 | DP-SGD q=0.02 (flat L2) |") || !strings.Contains(text, "| 100.0 |") {
		t.Fatalf("baseline row missing:\n%s", text)
	}
	for _, v := range variants {
		if !strings.Contains(text, "| "+v.name+" |") {
			t.Errorf("variant %q missing", v.name)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "twice_accuracy.png")); err != nil {
		t.Fatal(err)
	}
}
