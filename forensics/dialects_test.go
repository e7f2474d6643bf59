package forensics_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/forensics"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
)

// TestLoadIsTheSameOnBothDialects: every dump of fixtures/dumps loads into
// SQLite and into PostgreSQL as the same runs, tasks, slots, log lines and
// placeholder rows, and doctor and `ledger why` say the same of both.
func TestLoadIsTheSameOnBothDialects(t *testing.T) {
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
			lite, pg := storetest.OpenDialect(t, store.SQLite), storetest.OpenDialect(t, store.Postgres)
			loadFixture(t, lite, name)
			loadFixture(t, pg, name)
			for _, q := range []string{
				`SELECT * FROM migrations ORDER BY id`,
				`SELECT * FROM migration_tasks ORDER BY id`,
				`SELECT * FROM migration_records ORDER BY id`,
				`SELECT * FROM run_log ORDER BY id`,
				`SELECT * FROM id_allocators ORDER BY name`,
			} {
				require.Equal(t, rowsOf(t, lite, q), rowsOf(t, pg, q), q)
			}
			for _, k := range canon.Kinds() {
				q := `SELECT * FROM ` + k.Table() + ` ORDER BY id`
				require.Equal(t, rowsOf(t, lite, q), rowsOf(t, pg, q), q)
			}
			require.Equal(t, diagnosisOf(t, lite), diagnosisOf(t, pg))
			tenants := rowsOf(t, lite, `SELECT DISTINCT tenant_id FROM migration_records ORDER BY tenant_id`)
			for _, r := range tenants {
				require.Equal(t, whyOf(t, lite, r["tenant_id"].(string)), whyOf(t, pg, r["tenant_id"].(string)))
			}
		})
	}
}

// rowsOf reads a query's rows as column -> value, NULL as "NULL" and a
// JSON object by what it holds (PostgreSQL writes its own spacing).
func rowsOf(t *testing.T, db *sql.DB, q string) []map[string]any {
	t.Helper()
	rows, err := db.Query(q)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []map[string]any
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		row := map[string]any{}
		for i, v := range vals {
			var obj map[string]any
			switch {
			case !v.Valid:
				row[cols[i]] = "NULL"
			case json.Unmarshal([]byte(v.String), &obj) == nil:
				row[cols[i]] = obj
			default:
				row[cols[i]] = v.String
			}
		}
		out = append(out, row)
	}
	require.NoError(t, rows.Err())
	return out
}

// diagnosisOf is doctor's JSON but for the program of the repair that
// frees slots, each dialect's own (TestOrphanSlotsRepairFreesThem).
func diagnosisOf(t *testing.T, db *sql.DB) string {
	t.Helper()
	d := doctor(t, db, "")
	for i := range d.Findings {
		for j, r := range d.Findings[i].Repair {
			if strings.HasPrefix(r, "sqlite3 ") || strings.HasPrefix(r, "psql ") {
				_, note, _ := strings.Cut(r, "   # ")
				d.Findings[i].Repair[j] = "(the dialect's shell)   # " + note
			}
		}
	}
	b, err := json.Marshal(d)
	require.NoError(t, err)
	return string(b)
}

func whyOf(t *testing.T, db *sql.DB, tenant string) *forensics.Grouping {
	t.Helper()
	g, err := forensics.Why(context.Background(), db, phases.New(db, nil), tenant, "", 0)
	require.NoError(t, err)
	return g
}
