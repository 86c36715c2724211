package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's getting-started lines hold (issue 40 item 9): it says how
// to get a binary, the Go files it links exist, and every Example it names
// is defined in the files it points to.
func TestReadmeGettingStarted(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	for _, w := range []string{"go install ./cmd/dptrain", "go mod tidy", "Options.HoldOut", "PredictRecords"} {
		if !strings.Contains(text, w) {
			t.Errorf("README lacks %q", w)
		}
	}
	var sources strings.Builder
	for _, m := range regexp.MustCompile(`\]\(([\w/]+\.go)\)`).FindAllStringSubmatch(text, -1) {
		b, err := os.ReadFile(filepath.Join("..", "..", m[1]))
		if err != nil {
			t.Errorf("README links %s: %v", m[1], err)
		}
		sources.Write(b)
	}
	for _, m := range regexp.MustCompile("`(Example\\w+)`").FindAllStringSubmatch(text, -1) {
		if !strings.Contains(sources.String(), "func "+m[1]+"()") {
			t.Errorf("README names %s, defined in none of the files it links", m[1])
		}
	}
}
