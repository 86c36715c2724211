package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
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

// goDecls is what the module's Go source declares: per package name (the
// union over directories of that name), its top-level names, and per type
// name (over all packages), its methods and struct fields.
type goDecls struct {
	pkgs    map[string]map[string]bool
	members map[string]map[string]bool
	files   map[string]bool // the Go files' base names
}

// declsOf parses every Go file of the module under root (test files too:
// docs name test functions) and collects its declarations.
func declsOf(t *testing.T, root string) goDecls {
	t.Helper()
	d := goDecls{pkgs: map[string]map[string]bool{}, members: map[string]map[string]bool{}, files: map[string]bool{}}
	member := func(typ, name string) {
		if d.members[typ] == nil {
			d.members[typ] = map[string]bool{}
		}
		d.members[typ][name] = true
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if name := e.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "results") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := strings.TrimSuffix(f.Name.Name, "_test") // examples live in pkg_test
		top := d.pkgs[pkg]
		if top == nil {
			top = map[string]bool{}
			d.pkgs[pkg] = top
		}
		d.files[filepath.Base(path)] = true
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil || len(decl.Recv.List) == 0 {
					top[decl.Name.Name] = true
					continue
				}
				typ := decl.Recv.List[0].Type
				for {
					switch x := typ.(type) {
					case *ast.StarExpr:
						typ = x.X
						continue
					case *ast.IndexExpr:
						typ = x.X
						continue
					case *ast.IndexListExpr:
						typ = x.X
						continue
					}
					break
				}
				if id, ok := typ.(*ast.Ident); ok {
					member(id.Name, decl.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						top[spec.Name.Name] = true
						if d.members[spec.Name.Name] == nil {
							d.members[spec.Name.Name] = map[string]bool{}
						}
						switch st := spec.Type.(type) {
						case *ast.StructType:
							for _, fl := range st.Fields.List {
								for _, n := range fl.Names {
									member(spec.Name.Name, n.Name)
								}
								if len(fl.Names) == 0 { // embedded: its name is its type's
									ty := fl.Type
									if s, ok := ty.(*ast.StarExpr); ok {
										ty = s.X
									}
									switch x := ty.(type) {
									case *ast.Ident:
										member(spec.Name.Name, x.Name)
									case *ast.SelectorExpr:
										member(spec.Name.Name, x.Sel.Name)
									}
								}
							}
						case *ast.InterfaceType:
							for _, m := range st.Methods.List {
								for _, n := range m.Names {
									member(spec.Name.Name, n.Name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							top[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// An embedded struct's fields and methods are its embedder's too.
	for changed := true; changed; {
		changed = false
		for typ, ms := range d.members {
			for m := range ms {
				for inner := range d.members[m] {
					if !ms[inner] {
						ms[inner] = true
						changed = true
					}
				}
			}
			_ = typ
		}
	}
	return d
}

var (
	codeSpanRE = regexp.MustCompile("`([^`\n]+)`")
	// A Go reference: pkg.Name, Type.Member, pkg.Type.Member, each
	// optionally called ("()" or "(args)").
	dottedRE = regexp.MustCompile(`^([A-Za-z_]\w*)\.([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?(?:\(.*\))?$`)
	// A bare call of an unexported function or method: name() or
	// name(args). (Exported bare names are as often another library's.)
	callRE = regexp.MustCompile(`^([a-z_]\w*)\(.*\)$`)
	// A bare unexported Go name in lower camel case (useFactored): plain
	// words and flags have no inner capital.
	camelRE = regexp.MustCompile(`^[a-z][a-z0-9]*[A-Z]\w*$`)
	// A Go file named alone: base.go.
	goFileRE = regexp.MustCompile(`^[\w-]+\.go$`)
	// A repository path: a top-level directory, then more of the path.
	pathRE = regexp.MustCompile(`^([a-z][a-z0-9_-]*)/([\w./-]*)$`)
)

// fileExts are extensions: `summary.json` names a file, not a member.
var fileExts = map[string]bool{"go": true, "json": true, "jsonl": true, "md": true, "bin": true, "csv": true, "png": true, "svg": true, "html": true, "sh": true, "py": true, "txt": true, "npy": true}

// staleNames returns one message per code span of text that names, as a Go
// identifier or a repository path, something the module does not have.
// dirs are the repository's top-level directories; only paths under them
// are checked (run-directory paths such as release/model.bin are not the
// repository's). A call or dotted name is checked when its first part is
// one of the module's packages or types; other spans (flags, formulas,
// other languages' names) are not Go references of this module.
func staleNames(d goDecls, dirs map[string]bool, root, text string) []string {
	var bad []string
	for _, m := range codeSpanRE.FindAllStringSubmatch(stripFences(text), -1) {
		span := strings.TrimSpace(m[1])
		if p := pathRE.FindStringSubmatch(span); p != nil && dirs[p[1]] {
			rel, _, _ := strings.Cut(span, "#")
			rel = strings.TrimSuffix(rel, "/")
			if strings.ContainsAny(rel, "*{}<>") || strings.Contains(rel, "...") {
				continue // a pattern, not one path
			}
			if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
				bad = append(bad, fmt.Sprintf("path `%s` does not exist", span))
			}
			continue
		}
		if goFileRE.MatchString(span) {
			if !d.files[span] {
				bad = append(bad, fmt.Sprintf("file `%s` is in no directory of the module", span))
			}
			continue
		}
		if camelRE.MatchString(span) {
			if !d.anyTop(span) && !d.anyMember(span) {
				bad = append(bad, fmt.Sprintf("`%s`: no Go name %s in the module", span, span))
			}
			continue
		}
		if c := callRE.FindStringSubmatch(span); c != nil {
			if !d.anyTop(c[1]) && !d.anyMember(c[1]) {
				bad = append(bad, fmt.Sprintf("`%s`: no function or method %s", span, c[1]))
			}
			continue
		}
		g := dottedRE.FindStringSubmatch(span)
		if g == nil {
			continue
		}
		first, second, third := g[1], g[2], g[3]
		if top, ok := d.pkgs[first]; ok && first != "main" {
			switch {
			case !top[second]:
				bad = append(bad, fmt.Sprintf("`%s`: package %s has no %s", span, first, second))
			case third != "" && !d.members[second][third]:
				bad = append(bad, fmt.Sprintf("`%s`: %s.%s has no field or method %s", span, first, second, third))
			}
			continue
		}
		if ms, ok := d.members[first]; ok && third == "" && !fileExts[second] {
			if !ms[second] {
				bad = append(bad, fmt.Sprintf("`%s`: type %s has no field or method %s", span, first, second))
			}
		}
	}
	return bad
}

func (d goDecls) anyTop(name string) bool {
	for _, top := range d.pkgs {
		if top[name] {
			return true
		}
	}
	return false
}

func (d goDecls) anyMember(name string) bool {
	for _, ms := range d.members {
		if ms[name] {
			return true
		}
	}
	return false
}

func TestStaleNames(t *testing.T) {
	d := declsOf(t, "..")
	dirs := map[string]bool{"trainer": true, "docs": true, "clip": true}
	for _, c := range []struct {
		text string
		bad  int
	}{
		{"`trainer/run.go` (`state.step`) and `mechanism.Mechanism.OuterClip`", 0},
		{"`trainer/no_such_file.go`", 1},
		{"`clip.NoSuchClipper` and `state.noSuchMethod`", 2},
		{"`Config.Validate()` and `parseCheckpoint()`", 0},
		{"`noSuchFunction()`", 1},
		{"`SelfComposedDpEvent(x)`, `summary.json` and `run.go`", 0},
		{"`no_such_file.go`", 1},
		{"`parseCheckpoint` and `noSuchHelper`, `clip_norm`, `ε`", 1},
		{"`release/model.bin`, `--clip-norm`, `q·n`, `np.load(x)`", 0},
		{"```\n`clip.NoSuchClipper`\n```", 0},
		{"`accountant.PoissonGaussianRDP` and `trainer.Config.ClipNorm`", 0},
		{"`trainer.Config.NoSuchField`", 1},
	} {
		if got := staleNames(d, dirs, "..", c.text); len(got) != c.bad {
			t.Errorf("staleNames(%q) = %q, want %d problems", c.text, got, c.bad)
		}
	}
}

// TestDocsNames checks every code span of docs/ and the README that names a
// Go identifier of the module or a path of the repository: each must
// exist, so a rename or a move cannot leave the pages behind silently.
func TestDocsNames(t *testing.T) {
	d := declsOf(t, "..")
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			dirs[e.Name()] = true
		}
	}
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(pages, filepath.Join("..", "README.md")) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range staleNames(d, dirs, "..", string(b)) {
			t.Errorf("%s: %s", p, msg)
		}
	}
}
