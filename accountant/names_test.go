package accountant

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
	"unicode"
)

// citationWords are the words an exported name must not contain: a name says
// what it computes, not which theorem, table, lemma, proposition, corollary,
// equation or figure of a paper it comes from (the doc comment cites those).
var citationWords = map[string]bool{
	"Theorem": true, "Thm": true, "Table": true, "Lemma": true, "Prop": true, "Proposition": true,
	"Cor": true, "Corollary": true, "Eq": true, "Equation": true, "Fig": true, "Figure": true,
}

// camelWords splits an identifier at case changes, keeping digits with the
// word before them and acronyms whole: PTRPCATheorem8 → PTRPCA, Theorem8.
func camelWords(name string) []string {
	r := []rune(name)
	var words []string
	start := 0
	for i := 1; i < len(r); i++ {
		lowerToUpper := (unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1])) && unicode.IsUpper(r[i])
		acronymEnd := unicode.IsUpper(r[i-1]) && unicode.IsUpper(r[i]) && i+1 < len(r) && unicode.IsLower(r[i+1])
		if lowerToUpper || acronymEnd {
			words = append(words, string(r[start:i]))
			start = i
		}
	}
	return append(words, string(r[start:]))
}

// citesPaper reports whether name contains a citation word.
func citesPaper(name string) bool {
	for _, w := range camelWords(name) {
		if citationWords[strings.TrimRightFunc(w, unicode.IsDigit)] {
			return true
		}
	}
	return false
}

func TestCitesPaper(t *testing.T) {
	for name, want := range map[string]bool{
		"Theorem2": true, "Theorem2Opt": true, "Lemma3Literal": true, "Table2Params": true,
		"PTRPCATheorem8": true, "Prop9Xi": true, "Thm3Corrected": true, "TwicePaperLemma23": true,
		"GroupPrivacyFig2": true, "EqThree": true,
		"SRDPBound": false, "Correct": false, "Equal": false, "Tabulate": false, "Property": false,
		"PTRPCAClosedForm": false, "Corrupt": false, "Figures": false,
	} {
		if got := citesPaper(name); got != want {
			t.Errorf("citesPaper(%q) = %v (words %q), want %v", name, got, camelWords(name), want)
		}
	}
}

// No exported identifier of the package (function, method, type, field,
// interface method, variable or constant) names a theorem, table, lemma or
// proposition.
func TestExportedNamesDoNotCitePapers(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg := pkgs["accountant"]
	if pkg == nil || len(pkg.Files) == 0 {
		t.Fatal("package accountant not found")
	}
	checked := 0
	check := func(id *ast.Ident) {
		if id == nil || !id.IsExported() {
			return
		}
		checked++
		if citesPaper(id.Name) {
			t.Errorf("%s: exported name %s cites a paper; name what it computes", fset.Position(id.Pos()), id.Name)
		}
	}
	fields := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				check(n)
			}
		}
	}
	for _, f := range pkg.Files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				check(d.Name)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						check(s.Name)
						switch tt := s.Type.(type) {
						case *ast.StructType:
							fields(tt.Fields)
						case *ast.InterfaceType:
							fields(tt.Methods)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							check(n)
						}
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked only %d exported names; the parse missed the package", checked)
	}
}
