package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store"
	"crmimport/store/storetest"
)

// engineChoices are the choices between engines in crmimport's code, by
// the site each names (store.Dialect.Untaught): what a third engine must
// be taught, and nothing else. A choice added or removed is added here or
// removed (TestEveryEngineChoiceIsANamedCase).
var engineChoices = []string{
	"desktop.Server.folderOf",
	"forensics.doctor.freeSlots",
	"forensics.doctor.readyToTakeOver",
	"forensics.loader.advanceIdentities",
	"forensics.loader.writePlaceholders",
	"grid.statementsOf",
	"ledger.CompletedAmong",
	"ledger.FinalSlots",
	"ledger.Ledger.copies",
	"ledger.LoadFinalAmong",
	"ledger.claimSQL",
	"ledger.setHashesRows",
	"main.app.production",
	"main.app.uiDatabase",
	"phases.fillUp",
	"report.FailuresByID",
	"report.PageSkips",
	"store.Analyze",
	"store.Beside",
	"store.CommandName",
	"store.Dialect.Begin",
	"store.Dialect.IsBusy",
	"store.Dialect.IsConstraint",
	"store.Dialect.IsPrimaryKey",
	"store.Dialect.IsUnique",
	"store.Dialect.advanceSQL",
	"store.Dialect.beginUpgrade",
	"store.Dialect.foreignKeysHold",
	"store.Dialect.foreignKeysOff",
	"store.Dialect.makeSchema",
	"store.Dialect.schemaVersion",
	"store.Dialect.setSchemaVersion",
	"store.Dialect.upgradeLock",
	"store.File",
	"store.FileIDOf",
	"store.LedgerOnly",
	"store.LeftCopies",
	"store.Name",
	"store.Open",
	"store.OpenLedgerOnly",
	"store.OpenReader",
	"store.Throwaway",
	"store.WriteOutput",
	"store.fillOf",
	"storetest.backends",
	"target.ReadRows",
	"target.Writer.copies",
	"target.buildInsertSQL",
	"undo.walkFirst",
}

// TestEnginesListsEveryDialectOnce: Engines, the list the tests loop over,
// holds every Dialect that store declares, each once.
func TestEnginesListsEveryDialectOnce(t *testing.T) {
	declared := dialectConsts(t)
	var values []store.Dialect
	for _, v := range declared {
		values = append(values, v)
	}
	slices.Sort(values)
	got := slices.Clone(store.Engines())
	slices.Sort(got)
	require.Equal(t, values, got)
}

// TestAThirdEngineFailsExactlyWhereItMustBeTaught: each of store's
// per-engine choices knows every engine of Engines, and an engine it does
// not know fails it, naming it; they are every choice of store's own code.
func TestAThirdEngineFailsExactlyWhereItMustBeTaught(t *testing.T) {
	choices := store.Choices(t.TempDir())
	storetest.Taught(t, choices)
	var own []string
	for _, s := range engineChoices {
		if strings.HasPrefix(s, "store.") {
			own = append(own, s)
		}
	}
	require.ElementsMatch(t, own, slices.Collect(maps.Keys(choices)), "store's choices, each tried with a third engine")
}

// TestEveryEngineChoiceIsANamedCase reads crmimport's code (not its tests)
// for choices between engines (STYLE 19): never a comparison with one
// engine, which makes the other "whatever is not it"; a switch names every
// engine of Engines and has a default that panics with Untaught naming its
// site; and the sites are engineChoices, no more and no fewer.
func TestEveryEngineChoiceIsANamedCase(t *testing.T) {
	engines := dialectConsts(t)
	var sites []string
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (e.Name() == "testdata" || e.Name() == "node_modules" || strings.HasPrefix(e.Name(), ".") && path != "..") {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		sites = append(sites, engineSwitches(t, fset, f, engines)...)
		return nil
	})
	require.NoError(t, err)
	slices.Sort(sites)
	require.Equal(t, engineChoices, sites, "the choices between engines that a third engine must be taught")
}

// engineSwitches checks the choices between engines in f and returns
// their sites.
func engineSwitches(t *testing.T, fset *token.FileSet, f *ast.File, engines map[string]store.Dialect) []string {
	t.Helper()
	inStore := f.Name.Name == "store"
	engineOf := func(e ast.Expr) (string, bool) {
		switch x := e.(type) {
		case *ast.Ident:
			_, ok := engines[x.Name]
			return x.Name, ok && inStore
		case *ast.SelectorExpr:
			pkg, ok := x.X.(*ast.Ident)
			_, known := engines[x.Sel.Name]
			return x.Sel.Name, ok && pkg.Name == "store" && known
		}
		return "", false
	}
	var sites []string
	untaught := 0
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			_, x := engineOf(n.X)
			_, y := engineOf(n.Y)
			if (n.Op == token.EQL || n.Op == token.NEQ) && (x || y) {
				t.Errorf("%s: an engine compared with %s: a switch with a case per engine (STYLE 19)", fset.Position(n.Pos()), n.Op)
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Untaught" {
				untaught++
			}
		case *ast.SwitchStmt:
			named := map[string]bool{}
			var def *ast.CaseClause
			for _, s := range n.Body.List {
				c := s.(*ast.CaseClause)
				if c.List == nil {
					def = c
				}
				for _, e := range c.List {
					if name, ok := engineOf(e); ok {
						named[name] = true
					}
				}
			}
			if len(named) == 0 {
				return true
			}
			pos := fset.Position(n.Pos())
			for name := range engines {
				if !named[name] {
					t.Errorf("%s: a choice between engines with no case for %s", pos, name)
				}
			}
			site, ok := untaughtSite(def)
			if !ok {
				t.Errorf("%s: a choice between engines whose default does not panic(d.Untaught(\"site\")) alone", pos)
				return true
			}
			sites = append(sites, site)
		}
		return true
	})
	if untaught != len(sites) {
		t.Errorf("%s: %d calls of Untaught, %d of them the default of a choice between engines", fset.Position(f.Pos()), untaught, len(sites))
	}
	return sites
}

// untaughtSite is the site of a default case that is panic(d.Untaught("site")) and nothing else.
func untaughtSite(c *ast.CaseClause) (string, bool) {
	if c == nil || len(c.Body) != 1 {
		return "", false
	}
	st, ok := c.Body[0].(*ast.ExprStmt)
	if !ok {
		return "", false
	}
	p, ok := st.X.(*ast.CallExpr)
	if !ok || len(p.Args) != 1 {
		return "", false
	}
	if id, ok := p.Fun.(*ast.Ident); !ok || id.Name != "panic" {
		return "", false
	}
	u, ok := p.Args[0].(*ast.CallExpr)
	if !ok || len(u.Args) != 1 {
		return "", false
	}
	if sel, ok := u.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Untaught" {
		return "", false
	}
	lit, ok := u.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	site, err := strconv.Unquote(lit.Value)
	return site, err == nil
}

// dialectConsts are the constants of type Dialect that store declares, by
// name.
func dialectConsts(t *testing.T) map[string]store.Dialect {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string]store.Dialect{}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				v := s.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Dialect" {
					continue
				}
				for i, name := range v.Names {
					lit := v.Values[i].(*ast.BasicLit)
					val, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					out[name.Name] = store.Dialect(val)
				}
			}
		}
	}
	require.NotEmpty(t, out)
	return out
}
