package mechanism

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Per-step events and gradient-noise scales are built only in this package:
// the trainer and the command line obtain them from a Mechanism, so the
// noise a step adds and the event it charges cannot drift apart.

const (
	accountantPath = "github.com/dptrain/dptrain/accountant"
	clipPath       = "github.com/dptrain/dptrain/clip"
)

// forbiddenCalls are constructors of events and of noise scales.
var forbiddenCalls = map[string][]string{
	accountantPath: {"NewTwiceSampled", "OptimalNoise"},
	clipPath:       {"NewIsotropic", "IsotropicFor", "NewBlockGaussian", "BlockNoiseFor"},
}

// forbiddenMethods build events from values of other packages
// (preprocess.Sensitivity.Preprocessed, samplers' Event).
var forbiddenMethods = []string{"Preprocessed", "GaussianEvent"}

// eventTypes are the accountant's event types (those with an eventKind
// method) and Block, read from its sources.
func eventTypes(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("../accountant/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("accountant sources: %v (%d files)", err, len(files))
	}
	out := map[string]bool{"Block": true}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "eventKind" {
				continue
			}
			typ := fn.Recv.List[0].Type
			if st, ok := typ.(*ast.StarExpr); ok {
				typ = st.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				out[id.Name] = true
			}
		}
	}
	if !out["Gaussian"] || !out["PoissonSampled"] || !out["TwiceSampled"] || !out["ProjectedSGD"] {
		t.Fatalf("event types read from the accountant: %v", out)
	}
	return out
}

// violations lists where src builds an event or a noise scale.
func violations(fset *token.FileSet, f *ast.File, events map[string]bool) []string {
	pkgOf := map[string]string{} // local name → import path
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		pkgOf[name] = p
	}
	sel := func(e ast.Expr) (string, string, bool) {
		s, ok := e.(*ast.SelectorExpr)
		if !ok {
			return "", "", false
		}
		id, ok := s.X.(*ast.Ident)
		if !ok {
			return "", s.Sel.Name, false
		}
		return pkgOf[id.Name], s.Sel.Name, true
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if p, name, ok := sel(n.Type); ok && p == accountantPath && events[name] {
				out = append(out, fset.Position(n.Pos()).String()+": accountant."+name+"{…}")
			}
		case *ast.CallExpr:
			p, name, pkg := sel(n.Fun)
			for _, f := range forbiddenCalls[p] {
				if pkg && name == f {
					out = append(out, fset.Position(n.Pos()).String()+": "+p[strings.LastIndex(p, "/")+1:]+"."+name)
				}
			}
			for _, m := range forbiddenMethods {
				if name == m && (!pkg || p == "") {
					out = append(out, fset.Position(n.Pos()).String()+": ."+name+"(…)")
				}
			}
		}
		return true
	})
	return out
}

func TestEventsAndNoiseOnlyInMechanism(t *testing.T) {
	events := eventTypes(t)
	fset := token.NewFileSet()
	checked := 0
	for _, root := range []string{"../trainer", "../cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			checked++
			for _, v := range violations(fset, f, events) {
				t.Errorf("%s: build events and noise scales through mechanism.Mechanism", v)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d files, want the trainer's and the commands'", checked)
	}
}

// The checker itself finds each kind of construction, under any import name.
func TestBoundaryCheckerFindsConstructions(t *testing.T) {
	events := eventTypes(t)
	for _, tc := range []struct {
		src  string
		want int
	}{
		{`package p; import "github.com/dptrain/dptrain/accountant"; var e = accountant.Gaussian{Sigma: 1}`, 1},
		{`package p; import acc "github.com/dptrain/dptrain/accountant"; var e = acc.PoissonSampled{Q: 0.1, Event: acc.Gaussian{Sigma: 1}}`, 2},
		{`package p; import "github.com/dptrain/dptrain/accountant"; var e = accountant.NewTwiceSampled(0.1, 0.5, 1, 1)`, 1},
		{`package p; import "github.com/dptrain/dptrain/clip"; func f(c clip.Clipper) { clip.IsotropicFor(c, 1) }`, 1},
		{`package p; func f(s interface{ Preprocessed(int) int }) { s.Preprocessed(1) }`, 1},
		{`package p; import "github.com/dptrain/dptrain/accountant"; var r = accountant.HiddenStateRun{}; var e accountant.Event`, 0},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", tc.src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if got := violations(fset, f, events); len(got) != tc.want {
			t.Errorf("%s: found %v, want %d", tc.src, got, tc.want)
		}
	}
}
