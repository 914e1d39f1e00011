package devtensor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestEveryExportedIdentifierIsDocumented parses every non-test .go file of this package
// (whatever its build tags) and fails, listing them, when an exported identifier has no
// doc comment: an exported func, a method with an exported name on an exported type, an
// exported type, an exported const or var. As godoc does, a type, const or var inside a
// documented group (type/const/var ( ... )) is covered by the group's doc comment; a
// const or var spec's own doc comment or line comment also counts.
func TestEveryExportedIdentifierIsDocumented(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var missing []string
	total := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name != "devtensor" {
			continue
		}
		report := func(pos token.Pos, what string, doc bool) {
			total++
			if !doc {
				missing = append(missing, fset.Position(pos).String()+": "+what)
			}
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				what := "func " + d.Name.Name
				if d.Recv != nil {
					recv := receiverTypeName(d.Recv)
					if !ast.IsExported(recv) {
						continue // not in godoc: a method of an unexported type
					}
					what = "method " + recv + "." + d.Name.Name
				}
				report(d.Pos(), what, hasText(d.Doc))
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							report(s.Pos(), "type "+s.Name.Name, hasText(s.Doc) || hasText(d.Doc))
						}
					case *ast.ValueSpec:
						doc := hasText(s.Doc) || hasText(s.Comment) || hasText(d.Doc)
						for _, n := range s.Names {
							if n.IsExported() {
								report(n.Pos(), d.Tok.String()+" "+n.Name, doc)
							}
						}
					}
				}
			}
		}
	}
	if total == 0 {
		t.Fatal("found no exported identifier: did the test run in the package directory?")
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Errorf("%d of %d exported identifiers have no doc comment (godoc style: "+
			"start with the name, say what it does, its errors and who must Close what):\n\t%s",
			len(missing), total, strings.Join(missing, "\n\t"))
	}
}

// receiverTypeName is the type name of a method's receiver: T for T, *T, T[P] or *T[P].
func receiverTypeName(recv *ast.FieldList) string {
	if recv == nil || len(recv.List) == 0 {
		return ""
	}
	e := recv.List[0].Type
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func hasText(g *ast.CommentGroup) bool {
	return g != nil && strings.TrimSpace(g.Text()) != ""
}
