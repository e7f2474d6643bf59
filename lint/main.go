// Command lint holds the project's own checks, which make lint runs beside
// gofmt, go vet and staticcheck:
//
//   - Imports point one way, down (STYLE 1): every package of the module has
//     a floor in floors, and imports only packages of lower floors. A new
//     package has none until it is given one here.
//   - Which way down is (STYLE 1, deps.go): store imports no project
//     package, ledger only store, phases never importer, canon and target
//     stand just above ledger, and no code but tests imports a command, lint,
//     bench or a …test package; the faces reach importer, undo and phases
//     only through the application layer, runs (STYLE 18).
//   - Only store opens the database (issue 23): outside store, no code opens
//     a database connection (sql.Open), and none opens, creates or reads a
//     file by a name that holds the database's path (an identifier or field
//     called dbPath, DBPath, dbFile, …). SQLite's locks are POSIX locks,
//     which belong to the process: closing any descriptor of the database
//     file drops every lock its connections hold, and another process may
//     then delete the -wal from under them. store reads a file's first bytes
//     through the descriptor SQLite already holds (store/head.go).
//
// Test files are not checked: they are not the program. It prints each
// finding as FILE:LINE: what, and exits 1 when there is one.
//
//	go run ./lint
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

const module = "crmimport"

// floors places every package of the module: a package imports only
// packages of lower floors. Each sits as low as its imports allow, so that
// a floor says how much stands under a package (issue 24: eleven floors
// became nine). Test helpers (…test) and tools are placed by their imports
// too: deps.go keeps non-test code from importing them.
var floors = map[string]int{
	"bytesize":                   0,
	"fixtures":                   0,
	"fixtures/gen":               0,
	"importer/input/inputtest":   0,
	"lint":                       0,
	"store":                      0,
	"store/pgtest":               0,
	"visible":                    0,
	"fixtures/gen/cmd/crmgen":    1,
	"importer/reader":            1,
	"ledger":                     1,
	"store/storetest":            1,
	"canon":                      2,
	"failpoint":                  2,
	"importer/input":             2,
	"importer/reader/readertest": 2,
	"canon/canontest":            3,
	"importer/profile":           3,
	"ledger/ledgertest":          3,
	"phases":                     3,
	"target":                     3,
	"importer/fixmanifest":       4,
	"importer/runopts":           4,
	"importer/suggest":           4,
	"undo":                       4,
	"importer":                   5,
	"report":                     5,
	"fixfile":                    6,
	"forensics":                  6,
	"runs":                       6,
	"grid":                       7,
	"cmd/crmbench":               8,
	"desktop":                    8,
	"cmd/crmimport":              9,
}

// opens are the functions that open (and so, in time, close) a file by
// name, with the index of the name among their arguments.
var opens = map[string]int{
	"os.Open": 0, "os.OpenFile": 0, "os.Create": 0, "os.ReadFile": 0, "os.WriteFile": 0,
	"os.Truncate": 0, "zip.OpenReader": 0, "os.OpenInRoot": 1, "os.DirFS": -1,
}

// dbName is how the code names the database's path.
var dbName = regexp.MustCompile(`(?i)^(db|database)(path|file|name)$`)

func main() {
	var findings []string
	root := "."
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		findings = append(findings, check(p)...)
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "lint:", err)
		os.Exit(1)
	}
	broken, err := checkDeps()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lint:", err)
		os.Exit(1)
	}
	findings = append(findings, broken...)
	sort.Strings(findings)
	for _, f := range findings {
		fmt.Println(f)
	}
	if len(findings) > 0 {
		os.Exit(1)
	}
}

func check(file string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ImportsOnly)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", file, err)}
	}
	pkg := filepath.ToSlash(filepath.Dir(file))
	var out []string
	at := func(p token.Pos, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(p), fmt.Sprintf(format, args...)))
	}
	floor, placed := floors[pkg]
	if !placed {
		at(f.Package, "package %s has no floor: give it one in lint/main.go (imports point one way, down)", pkg)
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		dep, ok := strings.CutPrefix(p, module+"/")
		if !ok || !placed {
			continue
		}
		depFloor, known := floors[dep]
		switch {
		case !known:
			at(imp.Pos(), "%s imports %s, which has no floor in lint/main.go", pkg, dep)
		case depFloor >= floor:
			at(imp.Pos(), "%s (floor %d) imports %s (floor %d): imports point one way, down", pkg, floor, dep, depFloor)
		}
	}
	if pkg == "store" || strings.HasPrefix(pkg, "store/") {
		return out
	}
	f, err = parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		return append(out, fmt.Sprintf("%s: %v", file, err))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		name := callee(call.Fun)
		if name == "sql.Open" || name == "sql.OpenDB" {
			if pkg != "bench" { // the bench's PostgreSQL floor: a server's database, no file
				at(call.Pos(), "%s outside store: only store opens a database (issue 23: SQLite's locks)", name)
			}
			return true
		}
		arg, ok := opens[name]
		if !ok {
			return true
		}
		for i, a := range call.Args {
			if arg >= 0 && i != arg {
				continue
			}
			if id := mentionsDB(a); id != "" {
				at(call.Pos(), "%s(%s…) opens the database's path outside store: closing it drops SQLite's locks (issue 23); go through store", name, id)
			}
		}
		return true
	})
	return out
}

// callee is a call's function as pkg.Name, or "".
func callee(fun ast.Expr) string {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return x.Name + "." + sel.Sel.Name
}

// mentionsDB names the identifier or field of e that names the database's
// path, or "". A folder beside it (filepath.Dir(dbPath)) is not the file.
func mentionsDB(e ast.Expr) string {
	found := ""
	ast.Inspect(e, func(n ast.Node) bool {
		if found != "" {
			return false
		}
		switch n := n.(type) {
		case *ast.CallExpr:
			if c := callee(n.Fun); c == "filepath.Dir" || c == "path.Dir" {
				return false
			}
		case *ast.Ident:
			if dbName.MatchString(n.Name) {
				found = n.Name
			}
		case *ast.SelectorExpr:
			if dbName.MatchString(n.Sel.Name) {
				found = n.Sel.Name
				return false
			}
		}
		return true
	})
	return found
}
