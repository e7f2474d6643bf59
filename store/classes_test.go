package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReasonClass(t *testing.T) {
	t.Parallel()
	require.Equal(t, `email "…" is not an email address`, ReasonClass(`email "bob(at)x" is not an email address`))
	require.Equal(t, "duplicate source_id", ReasonClass("duplicate source_id, first at contacts.csv:16"))
	require.Equal(t, "missing id", ReasonClass("missing id"))
	// Bytes that are not UTF-8 in one field are one class, wherever they are.
	a := ReasonClass(`not valid UTF-8: byte 0x92 in field 3 ("last_name"), at line 4, column 19 (if the file is not UTF-8, …)`)
	b := ReasonClass(`not valid UTF-8: byte 0x92 in field 3 ("last_name"), at line 1204, column 7 (if the file is not UTF-8, …)`)
	require.Equal(t, `not valid UTF-8: byte 0x92 in field 3 ("…"), at line …, column … (if the file is not UTF-8, …)`, a)
	require.Equal(t, a, b)
	require.NotEqual(t, a, ReasonClass(`not valid UTF-8: byte 0xE9 in field 3 ("last_name"), at line 4, column 19 (if the file is not UTF-8, …)`))
}

// oldFailures are failed records as a binary before the reason class (issue
// 23 item 15) wrote them: reason, no class.
var oldFailures = []string{
	`email "bob(at)example.com" is not an email address`,
	`email "ann(at)example.com" is not an email address`,
	"duplicate source_id, first at contacts.csv:16",
	"missing id",
}

// TestOpenClassesOldFailures: a database whose failed records were written
// before record_failures had a reason_class (SQLite's schema 11,
// PostgreSQL's 3) opens with every one of them classed by ReasonClass, in
// the step's own transaction, so that the Failed records page filters and
// counts by class in SQL (issue 23 item 15) over old runs too.
func TestOpenClassesOldFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	insert := func(t *testing.T, exec func(string, ...any) error) {
		t.Helper()
		require.NoError(t, exec(`INSERT INTO migrations (id, tenant_id, source, status, started_at) VALUES (1, 'acme', 'canonical', 'partial', 'then')`))
		for i, reason := range oldFailures {
			require.NoError(t, exec(`INSERT INTO record_failures (migration_id, kind, source_id, file, line, reason, raw) VALUES (1, 'contact', ?, 'contacts.csv', ?, ?, '{}')`,
				fmt.Sprintf("c-%d", i), i+2, reason))
		}
	}
	check := func(t *testing.T, db *sql.DB) {
		t.Helper()
		rows, err := db.QueryContext(ctx, `SELECT reason, reason_class FROM record_failures ORDER BY id`)
		require.NoError(t, err)
		defer rows.Close()
		n := 0
		for rows.Next() {
			var reason string
			var class sql.NullString
			require.NoError(t, rows.Scan(&reason, &class))
			require.True(t, class.Valid, "%q was left without its class", reason)
			require.Equal(t, ReasonClass(reason), class.String, reason)
			n++
		}
		require.NoError(t, rows.Err())
		require.Equal(t, len(oldFailures), n)
	}

	afterUpgrade(t, 11, 3, insert, check)
}
