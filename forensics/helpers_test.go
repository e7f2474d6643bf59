package forensics_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/forensics"
	"crmimport/phases"
)

// dumps is the folder of the dump fixtures.
const dumps = "../fixtures/dumps"

var loadTime = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)

// loadFixture loads fixtures/dumps/name into db, a fresh database, and
// applies its after-load.sql when it has one (what a dump cannot carry).
func loadFixture(t *testing.T, db *sql.DB, name string) {
	t.Helper()
	_, err := forensics.Load(context.Background(), db, filepath.Join(dumps, name), loadTime)
	require.NoError(t, err)
	if b, err := os.ReadFile(filepath.Join(dumps, name, "after-load.sql")); err == nil {
		_, err := db.Exec(string(b))
		require.NoError(t, err)
	}
}

func doctor(t *testing.T, db *sql.DB, tenant string) *forensics.Diagnosis {
	t.Helper()
	d, err := forensics.Doctor(context.Background(), db, phases.New(db, nil), forensics.DoctorOptions{Tenant: tenant})
	require.NoError(t, err)
	return d
}

func query(t *testing.T, db *sql.DB, q string, args ...any) [][]string {
	t.Helper()
	rows, err := db.Query(q, args...)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
			if !v.Valid {
				row[i] = "NULL"
			}
		}
		out = append(out, row)
	}
	require.NoError(t, rows.Err())
	return out
}
