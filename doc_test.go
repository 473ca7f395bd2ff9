package sframegen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"
)

// TestExportedNamesDocumented checks that every exported name of the
// library's packages (functions, methods of exported types, types,
// constants and variables) has a doc comment, as go doc shows them.
func TestExportedNamesDocumented(t *testing.T) {
	for _, dir := range []string{".", "cfi", "lower", "emit", "emit/verify", "elfpatch", "elfpatch/replace", "elfpatch/elfread", "elfpatch/sparse"} {
		fset := token.NewFileSet()
		notTest := func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
		pkgs, err := parser.ParseDir(fset, dir, notTest, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if len(pkgs) == 0 {
			t.Fatalf("%s: no package", dir)
		}
		for _, p := range pkgs {
			for _, f := range p.Files {
				for _, name := range undocumented(f) {
					t.Errorf("%s: exported %s has no doc comment", fset.Position(name.Pos()), name.Name)
				}
			}
		}
	}
}

// undocumented returns the exported names of f declared without a doc
// comment.
func undocumented(f *ast.File) []*ast.Ident {
	var names []*ast.Ident
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && receiverExported(d) && d.Doc == nil {
				names = append(names, d.Name)
			}
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				switch sp := sp.(type) {
				case *ast.TypeSpec:
					if sp.Name.IsExported() && sp.Doc == nil && d.Doc == nil {
						names = append(names, sp.Name)
					}
				case *ast.ValueSpec:
					for _, n := range sp.Names {
						if n.IsExported() && sp.Doc == nil && d.Doc == nil && sp.Comment == nil {
							names = append(names, n)
						}
					}
				}
			}
		}
	}
	return names
}

// receiverExported reports whether d is a function or a method of an
// exported type.
func receiverExported(d *ast.FuncDecl) bool {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return true
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
