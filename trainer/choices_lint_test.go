package trainer

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// choiceFields are the Config fields whose values are named string types
// (choices.go, and mechanism.Sampler / mechanism.Clip).
var choiceFields = map[string]bool{
	"Sampler": true, "Clip": true, "Model": true, "Optimizer": true, "Schedule": true,
	"Dataset": true, "Features": true, "FeatureNorm": true, "Preprocess": true,
	"DPSGDFVariant": true, "Accountant": true, "AuditKind": true, "Distributed": true,
	"Scale": true, "Noise": true, "Precision": true,
}

// TestChoicesAreNotComparedAsLiterals walks every Go file of the module and
// fails where a configuration choice (x.Model, cfg.Sampler, …) is compared
// with a string literal or switched on with string-literal cases: a literal
// compiles against a named string type, so a typo or a renamed value would
// silently never match. Compare with the type's constants.
func TestChoicesAreNotComparedAsLiterals(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var hits []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "results") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					return true
				}
				if (isChoice(n.X) && isStringLit(n.Y)) || (isChoice(n.Y) && isStringLit(n.X)) {
					hits = append(hits, fset.Position(n.Pos()).String())
				}
			case *ast.SwitchStmt:
				if n.Tag == nil || !isChoice(n.Tag) {
					return true
				}
				for _, st := range n.Body.List {
					for _, e := range st.(*ast.CaseClause).List {
						if isStringLit(e) {
							hits = append(hits, fset.Position(e.Pos()).String())
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		rel, _ := filepath.Rel(root, h)
		t.Errorf("%s: a configuration choice compared with a string literal; use the type's constant", rel)
	}
}

func isChoice(e ast.Expr) bool {
	if c, ok := e.(*ast.CallExpr); ok && len(c.Args) == 1 { // string(cfg.Model)
		e = c.Args[0]
	}
	s, ok := e.(*ast.SelectorExpr)
	if !ok || !choiceFields[s.Sel.Name] {
		return false
	}
	// Only selectors on a configuration or a mechanism spec: other structs
	// have string fields of the same names (an accountant's name in a
	// Bound, a benchmark cell's labels).
	switch x := s.X.(type) {
	case *ast.Ident:
		return configNames[x.Name]
	case *ast.SelectorExpr:
		return configNames[x.Sel.Name]
	case *ast.CallExpr: // trainer.Default().Model
		if f, ok := x.Fun.(*ast.SelectorExpr); ok {
			return f.Sel.Name == "Default"
		}
	}
	return false
}

// configNames are the names a Config or mechanism.Spec value goes by.
var configNames = map[string]bool{"cfg": true, "c": true, "conf": true, "config": true, "Config": true, "spec": true, "sp": true, "Spec": true}

func isStringLit(e ast.Expr) bool {
	b, ok := e.(*ast.BasicLit)
	return ok && b.Kind == token.STRING
}
