// Command funclen lists the longest functions and methods in the module's non-test Go code, so that the
// figure can be taken again after a change and compared (scripts/measure-core prints it).
//
//	go run ./scripts/funclen [-n 15] [dir]
//
// A function's length is its lines from the func keyword to the closing brace, as gofmt laid them out.
// Test files (*_test.go), testdata and hidden directories are left out.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type fn struct {
	pos   string
	name  string
	lines int
}

func main() {
	n := flag.Int("n", 15, "how many functions to list")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	fns, err := collect(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(1)
	}
	sort.SliceStable(fns, func(i, j int) bool { return fns[i].lines > fns[j].lines })
	if len(fns) > *n {
		fns = fns[:*n]
	}
	for _, f := range fns {
		fmt.Printf("%5d  %-40s %s\n", f.lines, f.name, f.pos)
	}
}

func collect(root string) ([]fn, error) {
	var out []fn
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parse %s: %w", path, err)
		}
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
			out = append(out, fn{
				pos:   fmt.Sprintf("%s:%d", start.Filename, start.Line),
				name:  funcName(fd),
				lines: end.Line - start.Line + 1,
			})
		}
		return nil
	})
	return out, err
}

// funcName names a method by its receiver's type, as (*sourceRun).poll.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	recv := "?"
	if id, ok := t.(*ast.Ident); ok {
		recv = id.Name
	}
	return fmt.Sprintf("(%s%s).%s", star, recv, fd.Name.Name)
}
