package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// slug is GitHub's anchor for a Markdown heading: lower case, letters,
// digits, '-' and '_' kept, spaces turned into '-', everything else dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"From delta to epsilon", "from-delta-to-epsilon"},
		{"The paper's DP-SGD", "the-papers-dp-sgd"},
		{"A9 neighbouring relations", "a9-neighbouring-relations"},
		{"Hybrid clipping", "hybrid-clipping"},
		{"SRDP: the privacy cost of non-private preprocessing", "srdp-the-privacy-cost-of-non-private-preprocessing"},
		{"The report's own cost", "the-reports-own-cost"},
	} {
		if got := slug(c.heading); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

var headingRE = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t]*$`)

// anchors returns the anchors of every page in this directory, keyed by file
// name. Headings inside fenced code blocks are not headings.
func anchors(t *testing.T) map[string]map[string]bool {
	t.Helper()
	pages, err := filepath.Glob("*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages found (%v)", err)
	}
	out := map[string]map[string]bool{}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		for _, m := range headingRE.FindAllStringSubmatch(stripFences(string(b)), -1) {
			set[slug(m[1])] = true
		}
		out[p] = set
	}
	return out
}

// stripFences blanks the lines of fenced code blocks.
func stripFences(s string) string {
	lines := strings.Split(s, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

var mdLinkRE = regexp.MustCompile(`\]\(([^)\s#]*)(#[^)\s]*)?\)`)

// TestPageLinks checks the links between the pages and from the README.
func TestPageLinks(t *testing.T) {
	a := anchors(t)
	check := func(from, dir, text string) {
		for _, m := range mdLinkRE.FindAllStringSubmatch(text, -1) {
			target, frag := m[1], strings.TrimPrefix(m[2], "#")
			if strings.Contains(target, "://") {
				continue
			}
			page := filepath.Base(from)
			if target != "" {
				rel := filepath.Clean(filepath.Join(dir, target))
				if filepath.Dir(rel) != "." {
					if _, err := os.Stat(rel); err != nil {
						t.Errorf("%s links to %s, which does not exist", from, target)
					}
					continue
				}
				page = rel
			}
			set, ok := a[page]
			if !ok {
				t.Errorf("%s links to %s, which is not a page of docs/", from, target)
				continue
			}
			if frag != "" && !set[frag] {
				t.Errorf("%s links to %s#%s, which has no such section", from, page, frag)
			}
		}
	}
	for p := range a {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		check(p, ".", string(b))
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\]\(docs/([^)\s]*)\)`).FindAllStringSubmatch(string(readme), -1) {
		check("../README.md", ".", "]("+m[1]+")")
	}
}

var goRefRE = regexp.MustCompile(`docs/([a-z0-9-]+\.md)(#[\p{L}\p{N}_-]+)?`)

// badGoRefs returns one message per docs/<page>.md[#<anchor>] in text that
// names a page or a section that does not exist.
func badGoRefs(a map[string]map[string]bool, text string) []string {
	var bad []string
	for _, m := range goRefRE.FindAllStringSubmatch(text, -1) {
		set, ok := a[m[1]]
		if !ok {
			bad = append(bad, "docs/"+m[1]+": no such page")
			continue
		}
		if frag := strings.TrimPrefix(m[2], "#"); frag != "" && !set[frag] {
			bad = append(bad, "docs/"+m[1]+m[2]+": no such section")
		}
	}
	return bad
}

func TestBadGoRefs(t *testing.T) {
	a := anchors(t)
	for _, c := range []struct {
		text string
		bad  int
	}{
		{"// see docs/hidden-state.md#the-outer-clip.", 0},
		{"// (docs/srdp.md, docs/accountants.md#relations)", 0},
		{"// docs/hidden-state.md#no-such-section", 1},
		{"// docs/no-such-page.md and docs/twice-sampling.md#closed-form-rdp", 1},
		{"// paper 002's A3, no link", 0},
	} {
		if got := badGoRefs(a, c.text); len(got) != c.bad {
			t.Errorf("badGoRefs(%q) = %q, want %d problems", c.text, got, c.bad)
		}
	}
}

// TestGoReferences checks every docs/<page>.md[#<anchor>] mentioned in a Go
// source file of the module.
func TestGoReferences(t *testing.T) {
	a := anchors(t)
	files := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "results") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || path == filepath.Join("..", "docs", "links_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, msg := range badGoRefs(a, string(b)) {
			t.Errorf("%s: %s", path, msg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Errorf("walked %d Go files; expected the whole module", files)
	}
}
