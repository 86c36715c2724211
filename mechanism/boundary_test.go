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

// Every noisy release comes from the one exact-noise place, lattice/
// (docs/secure-noise.md): a call of a normal or Laplace sampler anywhere
// else in the module is a defect unless its call site (file and enclosing
// function) is in samplerAllowList with the reason it releases nothing
// under the privacy claim, or stays continuous by design. Test files are
// not checked: a test releases nothing (its draws build inputs and
// reference values).

const exactNoiseDir = "lattice"

// samplerMethods are selectors (calls or method values), by name, that draw a normal or Laplace
// variate: math/rand's NormFloat64 and ExpFloat64 (the core of a Laplace
// draw), rng.Stream's FillNormal/AddNormal, and the accountant's
// LaplaceFromUniform.
var samplerMethods = map[string]bool{
	"NormFloat64": true, "ExpFloat64": true, "FillNormal": true, "AddNormal": true, "LaplaceFromUniform": true,
}

// distuvSamplers are gonum distributions whose Rand draws normal or
// Laplace variates; building one (or drawing from distuv.UnitNormal) counts.
var distuvSamplers = map[string]bool{"Normal": true, "Laplace": true}

const distuvPath = "gonum.org/v1/gonum/stat/distuv"

// samplerAllowList names each call site outside lattice/ that may draw from
// a normal or Laplace sampler, by "path/file.go:Func" (Func is Recv.Method
// for methods), with why. docs/secure-noise.md lists the same sites.
var samplerAllowList = map[string]string{
	"rng/rng.go:Stream.FillNormal":   "the helper itself: its callers are checked",
	"rng/rng.go:Stream.AddNormal":    "the helper itself: its callers are checked",
	"clip/noise.go:Gaussian.Add":     "gradient noise: continuous by default (--noise continuous) until issue 42 decides; --noise lattice makes it exact. Final-only runs keep it by design (docs/secure-noise.md)",
	"clip/pca.go:PrincipalBasisFrom": "random start of the power iteration on public gradients (subspace clipping's basis): no private data",
	"models/nn/layer.go:initWeights": "parameter initialisation: data-independent",
	"datasets/synthetic.go:":         "synthetic data generators",
	"benchmarks/kernel.go:":          "synthetic gradients for benchmarks",

	"objpert/goe.go:GOEQuantileMC":          "Monte Carlo of a data-independent eigenvalue law",
	"objpert/analysis.go:SyntheticLogistic": "synthetic data",
	"scripts/internal/srdpfig3/dppca.go:":   "figure-reproduction script: its outputs are plots of simulations, not releases under a claim",
	"scripts/internal/srdpfig3/train.go:":   "figure-reproduction script: its outputs are plots of simulations, not releases under a claim",
	"scripts/internal/srdpfig3/data.go:":    "figure-reproduction script: synthetic data",
}

// samplerSite is one sampler call: where, and its allow-list key.
type samplerSite struct{ pos, key string }

// samplerCalls lists the sampler calls in f, whose path relative to the
// module root is rel.
func samplerCalls(fset *token.FileSet, f *ast.File, rel string) []samplerSite {
	distuvName := ""
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == distuvPath {
			distuvName = "distuv"
			if im.Name != nil {
				distuvName = im.Name.Name
			}
		}
	}
	isDistuv := func(e ast.Expr, names map[string]bool) bool {
		s, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		id, ok := s.X.(*ast.Ident)
		return ok && distuvName != "" && id.Name == distuvName && names[s.Sel.Name]
	}
	var out []samplerSite
	visit := func(fn string, n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			hit := false
			switch n := n.(type) {
			case *ast.SelectorExpr: // a call, or a method value handed on
				hit = samplerMethods[n.Sel.Name] || (n.Sel.Name == "Rand" && isDistuv(n.X, map[string]bool{"UnitNormal": true}))
			case *ast.CompositeLit:
				hit = isDistuv(n.Type, distuvSamplers)
			}
			if hit {
				out = append(out, samplerSite{pos: fset.Position(n.Pos()).String(), key: rel + ":" + fn})
			}
			return true
		})
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			visit("", d)
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil {
			typ := fd.Recv.List[0].Type
			if st, ok := typ.(*ast.StarExpr); ok {
				typ = st.X
			}
			if ix, ok := typ.(*ast.IndexExpr); ok {
				typ = ix.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				name = id.Name + "." + name
			}
		}
		visit(name, fd)
	}
	return out
}

// allowed reports the allow-list entry covering key: the exact
// "file:Func", or "file:" for a whole file.
func allowed(key string) (string, bool) {
	if _, ok := samplerAllowList[key]; ok {
		return key, true
	}
	file := key[:strings.LastIndex(key, ":")+1]
	_, ok := samplerAllowList[file]
	return file, ok
}

func TestNoiseOnlyFromExactNoisePackage(t *testing.T) {
	fset := token.NewFileSet()
	used := map[string]bool{}
	checked := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == exactNoiseDir || rel == "results" || d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		for _, c := range samplerCalls(fset, f, rel) {
			if k, ok := allowed(c.key); ok {
				used[k] = true
				continue
			}
			t.Errorf("%s: a normal or Laplace sampler outside %s/ (%s): make the release through lattice.CountNoise or lattice.Sum, or add the site to samplerAllowList with its reason", c.pos, exactNoiseDir, c.key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 200 {
		t.Fatalf("checked %d files, want the whole module's", checked)
	}
	for k := range samplerAllowList {
		if !used[k] {
			t.Errorf("allow-list entry %q matches no sampler call: remove it", k)
		}
	}
}

// The sampler checker finds each kind of call, under any import name, and
// keys it by its enclosing function.
func TestSamplerCheckerFindsCalls(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{`package p; import "github.com/dptrain/dptrain/rng"; func f(s *rng.Stream) float64 { return 3 * s.NormFloat64() }`, []string{"x.go:f"}},
		{`package p; import "math/rand/v2"; func (c *T) release(n int) float64 { return float64(n) + rand.NormFloat64() }`, []string{"x.go:T.release"}},
		{`package p; func g(s interface{ ExpFloat64() float64 }) { _ = func() float64 { return s.ExpFloat64() } }`, []string{"x.go:g"}},
		{`package p; import "github.com/dptrain/dptrain/rng"; func h(s *rng.Stream, x []float32) { s.AddNormal(x, 1); s.FillNormal(x, 2) }`, []string{"x.go:h", "x.go:h"}},
		{`package p; import d "gonum.org/v1/gonum/stat/distuv"; var n = d.Normal{Mu: 0, Sigma: 1}; func k() float64 { return d.UnitNormal.Rand() }`, []string{"x.go:", "x.go:k"}},
		{`package p; import "gonum.org/v1/gonum/stat/distuv"; func q() float64 { return distuv.UnitNormal.Quantile(0.9) + distuv.Beta{Alpha: 1, Beta: 1}.Rand() }`, nil},
		{`package p; type Normal struct{}; func (Normal) Rand() float64 { return 0 }; func z() { _ = Normal{}.Rand() }`, nil},
		{`package p; import "github.com/dptrain/dptrain/rng"; func m(s *rng.Stream) func() float64 { return s.NormFloat64 }`, []string{"x.go:m"}},
		{`package p; type Normal interface{ NormFloat64() float64 }`, nil},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", tc.src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range samplerCalls(fset, f, "x.go") {
			got = append(got, c.key)
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: found %v, want %v", tc.src, got, tc.want)
		}
	}
}
