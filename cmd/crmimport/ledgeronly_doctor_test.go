package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"crmimport/store/storetest"
)

// productionTypes are the column types of a production engine's ledger
// tables, as its own schema has them: bigint ids and counters, a boolean,
// timestamps with a zone and JSON; every other column is text.
var productionTypes = map[string]string{
	"id": "bigint", "migration_id": "bigint", "record_id": "bigint", "current_phase": "integer", "duration_ms": "bigint",
	"attempts": "integer", "phase": "integer", "cancellation_requested": "boolean",
	"stats": "jsonb", "options": "jsonb", "checkpoint": "jsonb", "detail": "jsonb",
	"started_at": "timestamptz", "finished_at": "timestamptz", "updated_at": "timestamptz", "created_at": "timestamptz",
}

// productionLedger makes the production engine's own ledger of the dump
// fixtures/dumps/name in a new schema of the test cluster, without
// crmimport (productionLedgerOf), and returns the schema's address.
func productionLedger(t *testing.T, name string) string {
	t.Helper()
	files := map[string]string{}
	for _, table := range []string{"migrations", "migration_tasks", "migration_records"} {
		for _, ext := range []string{".csv", ".jsonl"} {
			if b, err := os.ReadFile(filepath.Join(dumps, name, table+ext)); err == nil {
				files[table+ext] = string(b)
			}
		}
	}
	require.Len(t, files, 3, "fixtures/dumps/%s", name)
	return productionLedgerOf(t, files)
}

// productionLedgerOf makes a production engine's own ledger of files
// (<table>.csv or <table>.jsonl -> its content, as a dump holds it) in a
// new schema of the test cluster, without crmimport: each table with the
// columns of its file (those crmimport does not know included), in
// production's types, loaded with COPY (CSV) or jsonb_populate_record
// (JSON Lines). It returns the schema's address.
func productionLedgerOf(t *testing.T, files map[string]string) string {
	t.Helper()
	ctx := context.Background()
	addr := storetest.PostgresDSN(t)
	conn, err := pgx.Connect(ctx, addr)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{conn.Config().RuntimeParams["search_path"]}.Sanitize())
	require.NoError(t, err)
	for _, table := range []string{"migrations", "migration_tasks", "migration_records"} {
		if b, ok := files[table+".csv"]; ok {
			head, err := csv.NewReader(strings.NewReader(b)).Read()
			require.NoError(t, err)
			createTable(t, conn, table, head)
			_, err = conn.PgConn().CopyFrom(ctx, strings.NewReader(b), "COPY "+table+" FROM STDIN WITH (FORMAT csv, HEADER true)")
			require.NoError(t, err, "%s.csv", table)
			continue
		}
		b, ok := files[table+".jsonl"]
		if !ok {
			continue
		}
		var cols []string
		var lines []string
		sc := bufio.NewScanner(strings.NewReader(b))
		for sc.Scan() {
			var row map[string]any
			require.NoError(t, json.Unmarshal(sc.Bytes(), &row))
			for k := range row {
				if !slices.Contains(cols, k) {
					cols = append(cols, k)
				}
			}
			lines = append(lines, sc.Text())
		}
		slices.Sort(cols)
		createTable(t, conn, table, cols)
		for _, l := range lines {
			_, err := conn.Exec(ctx, "INSERT INTO "+table+" SELECT * FROM jsonb_populate_record(NULL::"+table+", $1::jsonb)", l)
			require.NoError(t, err, "%s.jsonl: %s", table, l)
		}
	}
	return addr
}

func createTable(t *testing.T, conn *pgx.Conn, table string, cols []string) {
	t.Helper()
	var defs []string
	for _, c := range cols {
		typ := productionTypes[c]
		if typ == "" {
			typ = "text"
		}
		defs = append(defs, pgx.Identifier{c}.Sanitize()+" "+typ)
	}
	_, err := conn.Exec(context.Background(), "CREATE TABLE "+table+" ("+strings.Join(defs, ", ")+")")
	require.NoError(t, err)
}

// ledgerPrint is what the production schema holds: its tables, and each
// ledger table's rows.
func ledgerPrint(t *testing.T, addr string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, addr)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var out []string
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	out = append(out, strings.Join(tables, ","))
	for _, table := range []string{"migrations", "migration_tasks", "migration_records"} {
		var print string
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) || ' ' || coalesce(md5(string_agg(r::text, '|' ORDER BY r::text)), '')
			FROM `+table+` r`).Scan(&print))
		out = append(out, table+" "+print)
	}
	return out
}

// finding is a finding as doctor's JSON names it, with its count.
type finding struct {
	Name   string `json:"name"`
	Tenant string `json:"tenant"`
	Count  int64  `json:"count"`
}

// ledgerDoctor is doctor's JSON document, with what it says of a
// production ledger read as it is.
type ledgerDoctor struct {
	Clean      bool      `json:"clean"`
	Findings   []finding `json:"findings"`
	Incidents  []finding `json:"incidents"`
	LedgerOnly *struct {
		Database  string   `json:"database"`
		Unchecked []string `json:"unchecked"`
		Untold    []string `json:"untold"`
		Repairs   string   `json:"repairs"`
	} `json:"ledger_only"`
}

func ledgerDoctorJSON(t *testing.T, db string, flags ...string) (ledgerDoctor, result) {
	t.Helper()
	r := crm(t, nil, append([]string{"--db", db, "--json", "doctor"}, flags...)...)
	var d ledgerDoctor
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &d), r.stdout+r.stderr)
	return d, r
}

// TestDoctorOnAProductionLedger (issue 17 item 5): on a PostgreSQL schema
// that holds a production engine's ledger, made from each dump of
// fixtures/dumps without crmimport, doctor — told so with --ledger-only,
// or finding it — names the same findings with the same counts, and the
// same incidents, as on a SQLite file after `ledger load` of that dump,
// exits as it does, says what it could not check, and writes nothing to
// the production schema.
func TestDoctorOnAProductionLedger(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(dumps)
	require.NoError(t, err)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "crm.db")
			r := crm(t, nil, "--db", path, "ledger", "load", filepath.Join(dumps, name))
			require.Equal(t, exitOK, r.code, r.stderr)
			want, ref := ledgerDoctorJSON(t, path)
			require.Nil(t, want.LedgerOnly)

			addr := productionLedger(t, name)
			before := ledgerPrint(t, addr)
			for _, flags := range [][]string{{"--ledger-only"}, nil} {
				got, r := ledgerDoctorJSON(t, addr, flags...)
				require.Equal(t, ref.code, r.code, "%v: %s", flags, r.stderr)
				require.Equal(t, want.Findings, got.Findings, "%v", flags)
				require.Equal(t, want.Incidents, got.Incidents, "%v", flags)
				require.Equal(t, want.Clean, got.Clean)
				require.NotNil(t, got.LedgerOnly, "%v: doctor says it read a production ledger", flags)
				require.Equal(t, addr, got.LedgerOnly.Database)
				require.Equal(t, []string{"orphan-slots"}, got.LedgerOnly.Unchecked)
				require.Contains(t, strings.Join(got.LedgerOnly.Untold, "\n"), "no record_failures")
				require.Contains(t, got.LedgerOnly.Repairs, "crmimport --db incident.db ledger load DUMP")
				if flags == nil {
					require.Contains(t, r.stderr, "holds a production engine's ledger and no crmimport database: read as it is")
				}
			}
			// With a password in the address, which is never shown.
			secret := strings.Replace(addr, "postgres://postgres@", "postgres://postgres:hunter2@", 1)
			require.NotEqual(t, addr, secret)
			text := crm(t, nil, "--db", secret, "doctor")
			require.Equal(t, ref.code, text.code, text.stderr)
			require.NotContains(t, text.stdout+text.stderr, "hunter2")
			require.Contains(t, text.stdout, "read from the production ledger at postgres://postgres:xxxxx@")
			require.Contains(t, text.stdout, "  not checked: orphan-slots")
			require.Contains(t, text.stdout, "  cannot tell whether the target row of a created or matched slot is there")
			require.Equal(t, before, ledgerPrint(t, addr), "nothing was written to the production ledger")
		})
	}
}
