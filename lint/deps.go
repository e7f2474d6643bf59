package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// The direction of imports, as STYLE §1 states it by name: floors (main.go)
// say that imports point down; these rules say which way down is. Each
// rule names the packages it holds for and the imports it refuses; a
// finding names the rule, the package and the import that broke it.
// Imports are a package's own, test files' left out (go list's Imports):
// tests may reach anywhere.

// rule is one of STYLE §1's rules on imports.
type rule struct {
	name string
	// of tells the packages the rule holds for, refuses the imports it
	// refuses of them (both module-relative: "ledger", "cmd/crmimport").
	of      func(pkg string) bool
	refuses func(dep string) bool
}

// rules are STYLE §1's, in its order.
var rules = []rule{
	{name: "store is the ground floor: it imports no project package",
		of: is("store"), refuses: anything},
	{name: "ledger imports store and nothing else",
		of: is("ledger"), refuses: not(is("store"))},
	{name: "phases never imports importer: it receives the work as a function value",
		of: is("phases"), refuses: under("importer")},
	{name: "canon and target stand just above ledger: they import store, ledger and canon only",
		of: is("canon", "target"), refuses: not(is("store", "ledger", "canon"))},
	{name: "nothing imports cmd/…, lint or bench from non-test code",
		of: anything, refuses: func(dep string) bool { return dep == "lint" || isBench(dep) || isCommand(dep) }},
	// The bench is measurement, as the tests are: it starts its PostgreSQL
	// floor's throwaway server as they do (store/pgtest).
	{name: "nothing imports a …test package from non-test code",
		of: not(either(isTestHelper, isBench)), refuses: isTestHelper},
	{name: "desktop and cmd/crmimport reach importer, undo and phases only through the application layer runs",
		of: is("desktop", "cmd/crmimport"), refuses: is("importer", "undo", "phases")},
}

// checkDeps lists the module's packages with their imports and checks
// every rule.
func checkDeps() ([]string, error) {
	out, err := exec.Command("go", "list", "-e", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		return nil, fmt.Errorf("go list: %w %s", err, stderr)
	}
	imports := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		words := strings.Fields(sc.Text())
		pkg, ok := own(words[0])
		if !ok {
			continue
		}
		for _, w := range words[1:] {
			if dep, ok := own(w); ok {
				imports[pkg] = append(imports[pkg], dep)
			}
		}
		if imports[pkg] == nil {
			imports[pkg] = []string{}
		}
	}
	return breaks(imports, rules), sc.Err()
}

// breaks are the imports that break a rule, one line each.
func breaks(imports map[string][]string, rs []rule) []string {
	var out []string
	for _, r := range rs {
		for pkg, deps := range imports {
			if !r.of(pkg) {
				continue
			}
			for _, dep := range deps {
				if r.refuses(dep) {
					out = append(out, fmt.Sprintf("%s imports %s: %s (STYLE 1)", pkg, dep, r.name))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// own is a package path relative to the module, ok=false for another
// module's or the standard library's.
func own(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	return strings.CutPrefix(path, module+"/")
}

func is(pkgs ...string) func(string) bool {
	return func(p string) bool { return slices.Contains(pkgs, p) }
}

// under holds for a package and the packages under it.
func under(pkg string) func(string) bool {
	return func(p string) bool { return p == pkg || strings.HasPrefix(p, pkg+"/") }
}

func not(f func(string) bool) func(string) bool { return func(p string) bool { return !f(p) } }

func either(f, g func(string) bool) func(string) bool {
	return func(p string) bool { return f(p) || g(p) }
}

func anything(string) bool { return true }

// isBench holds for the bench's package, at the top or under cmd/.
func isBench(p string) bool { return under("bench")(p) || under("cmd/crmbench")(p) }

// isCommand holds for a command's package: cmd/… anywhere in the tree.
func isCommand(p string) bool { return strings.HasPrefix(p, "cmd/") || strings.Contains(p, "/cmd/") }

// isTestHelper holds for a package of shared test helpers (ledgertest,
// storetest, …), which test helpers may import, and nothing else.
func isTestHelper(p string) bool {
	return strings.HasSuffix(p[strings.LastIndex(p, "/")+1:], "test")
}
