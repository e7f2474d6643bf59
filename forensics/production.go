package forensics

import (
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
)

// A production engine's ledger, read as it is (issue 17 item 5): a
// PostgreSQL schema that holds migrations, migration_tasks and
// migration_records and none of crmimport's other tables, opened by
// store.OpenLedgerOnly, where every transaction is read-only. Its columns
// are production's — booleans, timestamps with a zone, plural kinds, JSON
// columns and columns of its own — exactly what a dump of it holds, so it
// is read as one: its three tables, in one snapshot, as text (what psql's
// \copy … CSV HEADER writes), into a private temporary folder, and loaded
// from there into a local database by Load. doctor, `ledger why` and
// report then read that copy as they read a loaded dump, and say what the
// three tables cannot tell (AsIs): nothing of the production database is
// written, and nothing of it is read but the ledger.

// Scope narrows what ReadLedger reads: one tenant's ledger, or one run —
// its tasks and the slots it owns — or, both zero, all of it.
type Scope struct {
	Tenant string
	Run    int64
}

// Production is a production engine's ledger read as it is: a local copy
// of its three tables, as `ledger load` of its dump makes one.
type Production struct {
	DB   *sql.DB      // the local copy
	Name string       // the production database, as named to the user (its password hidden)
	Load *LoadSummary // what the copy holds, and the load's notices
	dir  string
}

// Close closes the copy and removes it.
func (p *Production) Close() error {
	return errors.Join(p.DB.Close(), os.RemoveAll(p.dir))
}

// The columns a dump's load reads, table by table: of a production
// table's columns, only these are read (its own, such as an api_token, are
// not).
var dumpColumns = map[string][]string{
	tableRuns:  columnsOf(runRow{}),
	tableTasks: columnsOf(taskRow{}),
	tableSlots: columnsOf(slotRow{}),
}

func columnsOf(row any) []string {
	t := reflect.TypeOf(row)
	out := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		out = append(out, t.Field(i).Tag.Get("csv"))
	}
	return out
}

// tableColumnsSQL: the columns of a table of the search path's schema.
const tableColumnsSQL = `
SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?
ORDER BY ordinal_position`

// The rows of each table that a scope reads: a tenant's (its runs' tasks),
// or a run's (its tasks, the slots it owns). Each value is compared as
// text, whatever production's column type.
var scopeWhere = map[string][2]string{ // table -> [tenant, run]
	tableRuns:  {`WHERE tenant_id::text = ?`, `WHERE id = ?`},
	tableTasks: {`WHERE migration_id IN (SELECT id FROM migrations WHERE tenant_id::text = ?)`, `WHERE migration_id = ?`},
	tableSlots: {`WHERE tenant_id::text = ?`, `WHERE migration_id = ?`},
}

// ReadLedger reads the production ledger at prod (store.OpenLedgerOnly;
// name is how the user named it), narrowed to scope, into a new local
// database, as `ledger load` of its dump would load it: a row that a load
// refuses fails the read, saying which. now is the time of the copy's
// placeholder rows. The copy's folder is private to the user and removed
// by Close.
func ReadLedger(ctx context.Context, prod *sql.DB, name string, scope Scope, now time.Time) (p *Production, err error) {
	dir, err := os.MkdirTemp("", "crmimport-ledger-")
	if err != nil {
		return nil, fmt.Errorf("read the ledger at %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	if err := copyLedger(ctx, prod, dir, scope); err != nil {
		return nil, fmt.Errorf("read the ledger at %s: %w", name, err)
	}
	local, err := store.Open(ctx, filepath.Join(dir, "ledger.db"))
	if err != nil {
		return nil, err
	}
	sum, err := Load(ctx, local, dir, now)
	if err != nil {
		local.Close()
		// The rows a load refuses, without the temporary folder's name.
		var bad *DumpError
		if inner := errors.Unwrap(err); errors.As(err, &bad) && inner != nil {
			err = inner
		}
		return nil, fmt.Errorf("read the ledger at %s as a dump of it loads (its rows ordered by id, a file's line 2 its first row):\n%w", name, err)
	}
	return &Production{DB: local, Name: name, Load: sum, dir: dir}, nil
}

// copyLedger writes the three tables into dir as a dump, <table>.csv, in
// one read-only snapshot of prod, so that they agree with each other.
func copyLedger(ctx context.Context, prod *sql.DB, dir string, scope Scope) error {
	tx, err := prod.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, table := range []string{tableRuns, tableTasks, tableSlots} {
		if err := copyTable(ctx, tx, table, filepath.Join(dir, table+".csv"), scope); err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
	}
	return tx.Commit()
}

// copyTable writes the rows of one table that scope reads into path, as
// CSV with a header: the columns a load reads that the table has, each as
// its text, NULL as an empty field; ordered by id where it has one.
func copyTable(ctx context.Context, tx *sql.Tx, table, path string, scope Scope) error {
	var cols []string
	err := store.EachRow(ctx, tx, tableColumnsSQL, []any{table}, func(s store.Scanner) error {
		var c string
		if err := s.Scan(&c); err != nil {
			return err
		}
		if slices.Contains(dumpColumns[table], c) {
			cols = append(cols, c)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The statement is made of the table's name and the columns that both
	// the table and a dump's rows have, all of them names of ours (struct
	// tags, [a-z_]); the scope's value is a parameter.
	var sel []string
	for _, c := range cols {
		sel = append(sel, `"`+c+`"::text`)
	}
	if len(sel) == 0 {
		sel = []string{"NULL"} // a table without one known column: the load says which it needs
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + table
	var args []any
	switch {
	case scope.Run != 0:
		q += " " + scopeWhere[table][1]
		args = append(args, scope.Run)
	case scope.Tenant != "":
		q += " " + scopeWhere[table][0]
		args = append(args, scope.Tenant)
	}
	if slices.Contains(cols, "id") {
		q += " ORDER BY id"
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	if err := w.Write(cols); err != nil {
		return err
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	rec := make([]string, len(cols))
	err = store.EachRow(ctx, tx, q, args, func(s store.Scanner) error {
		if len(cols) == 0 {
			return nil
		}
		if err := s.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			rec[i] = v.String // NULL as an empty field, as psql writes it
		}
		return w.Write(rec)
	})
	if err != nil {
		return err
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return f.Close()
}

// AsIs says that a command read a production engine's ledger as it is,
// and what it cannot tell without the engine's other tables.
type AsIs struct {
	Database  string   `json:"database"`            // as named to the user
	Unchecked []string `json:"unchecked,omitempty"` // doctor's findings that cannot be checked
	Untold    []string `json:"untold"`              // what cannot be told there, and why
	Repairs   string   `json:"repairs,omitempty"`   // where doctor's repairs apply
}

// What the three ledger tables cannot tell, without the engine's others.
const (
	untoldRows     = "whether the target row of a created or matched slot is there: the target tables are not in the ledger's schema"
	untoldFailures = "which records failed and why: the ledger has no record_failures (a run's failed records are counted from " +
		"its stats and its tasks' counters)"
	untoldLog   = "a run's log: the ledger has no run_log"
	untoldOwner = "whether production's engine still runs a running run: the ledger names no owner crmimport knows, so a running run " +
		"shows as interrupted, as in a dump"
	repairsAsIs = "the repairs are for a crmimport database loaded from a dump of this ledger — `crmimport --db " + asIsDBPath +
		" ledger load DUMP`, DUMP a folder of migrations.csv, migration_tasks.csv and migration_records.csv as " +
		"`psql \\copy (SELECT * FROM <table>) TO '<table>.csv' CSV HEADER` writes them: nothing is written to the ledger itself"
)

// asIsDBPath is the database doctor's repairs name on a production
// ledger: one loaded from a dump of it, as repairsAsIs says.
const asIsDBPath = "incident.db"

// Doctor is Doctor on the production ledger: every finding but
// orphan-slots, which needs the target tables; the repairs name a
// database loaded from a dump of it (asIsDBPath).
func (p *Production) Doctor(ctx context.Context, e *phases.Engine, tenant string) (*Diagnosis, error) {
	d, err := Doctor(ctx, p.DB, e, DoctorOptions{Tenant: tenant, DBPath: asIsDBPath, asIs: true})
	if err != nil {
		return nil, err
	}
	d.LedgerOnly = &AsIs{Database: p.Name, Unchecked: []string{OrphanSlots},
		Untold: []string{untoldRows, untoldFailures, untoldOwner}, Repairs: repairsAsIs}
	return d, nil
}

// Why is Why on the production ledger.
func (p *Production) Why(ctx context.Context, e *phases.Engine, tenant string, kind ledger.Kind, run int64) (*Grouping, error) {
	g, err := Why(ctx, p.DB, e, tenant, kind, run)
	if err != nil {
		return nil, err
	}
	g.LedgerOnly = &AsIs{Database: p.Name, Untold: []string{untoldOwner}}
	return g, nil
}

// StoryOf is StoryOf on the production ledger: a final slot's row is not
// known there, nor its record's failed attempts, and its runs were not
// loaded from a dump.
func (p *Production) StoryOf(ctx context.Context, e *phases.Engine, tenant string, kind ledger.Kind, sourceID string) (*Story, error) {
	st, err := StoryOf(ctx, p.DB, e, tenant, kind, sourceID)
	if err != nil {
		return nil, err
	}
	for i := range st.Slots {
		s := &st.Slots[i]
		if s.Row != nil {
			s.Row.Missing, s.Row.Placeholder, s.Row.Unknown = false, false, true
		}
		if s.Run != nil {
			s.Run.Loaded = false
		}
		for j := range s.Later {
			s.Later[j].Loaded = false
		}
	}
	st.LedgerOnly = &AsIs{Database: p.Name, Untold: []string{untoldRows, untoldFailures, untoldOwner}}
	return st, nil
}

// Report is report.Build on the production ledger: the run page without
// the log, which the ledger does not hold; its advice to resume is for a
// database loaded from a dump of it.
func (p *Production) Report(ctx context.Context, e *phases.Engine, runID int64) (*report.Report, *AsIs, error) {
	r, err := report.Build(ctx, p.DB, e, runID, false)
	if err != nil {
		return nil, nil, err
	}
	r.Dump = p.Name
	return r, &AsIs{Database: p.Name, Untold: []string{untoldLog, untoldFailures, untoldOwner},
		Repairs: "its advice to resume is for " + strings.TrimPrefix(repairsAsIs, "the repairs are for ")}, nil
}
