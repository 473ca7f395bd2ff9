//go:build linux

package replace

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestUnsupportedDeclaresTheAPI checks that unsupported.go, the build of
// other systems, declares the exported names of the Linux build (functions,
// methods, types and their exported fields, variables, constants) and no
// other but ErrUnsupported, so that a program using the package builds
// everywhere.
func TestUnsupportedDeclaresTheAPI(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var linux, other []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasPrefix(string(src), "//go:build !linux\n"):
			other = append(other, exportedNames(f)...)
		case strings.HasPrefix(string(src), "//go:build linux\n"):
			linux = append(linux, exportedNames(f)...)
		}
	}
	slices.Sort(linux)
	slices.Sort(other)
	other = slices.DeleteFunc(other, func(s string) bool { return s == "ErrUnsupported" })
	if len(linux) < 40 {
		t.Fatalf("%d exported names in the Linux build, want at least 40: %q", len(linux), linux)
	}
	if !slices.Equal(linux, other) {
		t.Errorf("exported names:\nlinux:           %q\nunsupported.go: %q", linux, other)
	}
}

// exportedNames are the exported names f declares: X, Recv.X and Type.Field.
func exportedNames(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name, exported := d.Name.Name, d.Name.IsExported()
			if d.Recv != nil {
				typ := d.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				name = typ.(*ast.Ident).Name + "." + name
				exported = exported && typ.(*ast.Ident).IsExported()
			}
			if exported {
				names = append(names, name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					names = append(names, s.Name.Name)
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							for _, n := range fl.Names {
								if n.IsExported() {
									names = append(names, s.Name.Name+"."+n.Name)
								}
							}
							if len(fl.Names) == 0 { // embedded
								names = append(names, s.Name.Name+"."+types(fl.Type))
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	return names
}

// types is the name of an embedded field's type.
func types(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "?"
}
