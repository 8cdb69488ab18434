// Command codestats counts the sizes architecture.md quotes: the length of
// every function and method in the non-test, non-generated Go files under
// a folder (default .), their median and 90th percentile, those over a
// limit (default 40 lines), and the largest files.
//
//	go run ./lab/codestats [-over 40] [-files 5] [dir]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// sized is a function or a file and its length in lines.
type sized struct {
	lines int
	name  string
}

// stats is what one walk found.
type stats struct {
	funcs []sized
	files []sized
}

func main() {
	over := flag.Int("over", 40, "list the functions longer than this many lines")
	nfiles := flag.Int("files", 5, "list this many of the largest files")
	flag.Parse()
	dir := "."
	if flag.NArg() > 0 {
		dir = flag.Arg(0)
	}
	st, err := collect(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "codestats:", err)
		os.Exit(1)
	}
	st.print(os.Stdout, *over, *nfiles)
}

// collect reads every non-test Go file under dir, skipping testdata and
// hidden folders and generated files.
func collect(dir string) (*stats, error) {
	st := &stats{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return fmt.Errorf("parse %s: %w", p, err)
		}
		if ast.IsGenerated(f) {
			return nil
		}
		st.add(fset, p, f)
		return nil
	})
	return st, err
}

// add counts file p's functions (from func to closing brace) and lines.
func (st *stats) add(fset *token.FileSet, p string, f *ast.File) {
	st.files = append(st.files, sized{fset.File(f.Pos()).LineCount(), p})
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start := fset.Position(fd.Pos())
		n := fset.Position(fd.End()).Line - start.Line + 1
		st.funcs = append(st.funcs, sized{n, fmt.Sprintf("%s:%d %s", p, start.Line, fd.Name.Name)})
	}
}

// print writes the figures: one summary line, the functions over the
// limit (longest first) and the nfiles largest files.
func (st *stats) print(w io.Writer, over, nfiles int) {
	if len(st.funcs) == 0 {
		fmt.Fprintln(w, "no functions")
		return
	}
	bySize := func(s []sized) {
		sort.SliceStable(s, func(i, j int) bool { return s[i].lines > s[j].lines })
	}
	lens := make([]int, len(st.funcs))
	for i, f := range st.funcs {
		lens[i] = f.lines
	}
	sort.Ints(lens)
	bySize(st.funcs)
	bySize(st.files)
	long := 0
	for long < len(st.funcs) && st.funcs[long].lines > over {
		long++
	}
	fmt.Fprintf(w, "functions %d, median %d lines, p90 %d, over %d lines %d; files %d, largest %d lines\n",
		len(lens), lens[len(lens)/2], lens[len(lens)*9/10], over, long, len(st.files), st.files[0].lines)
	for _, f := range st.funcs[:long] {
		fmt.Fprintf(w, "  func %4d %s\n", f.lines, f.name)
	}
	for _, f := range st.files[:min(nfiles, len(st.files))] {
		fmt.Fprintf(w, "  file %4d %s\n", f.lines, f.name)
	}
}
