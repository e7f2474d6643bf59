package importer

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
)

// TestFailuresKeepTheirReasonClass: a failed record is written with its
// reason's class (store.ReasonClass) in the batch that fails it (R4, R12),
// on every dialect, so that the Failed records page filters and counts by
// class in SQL (issue 23 item 15) — a duplicate's class without where its
// first was, an email's without the value.
func TestFailuresKeepTheirReasonClass(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		importDir(t, New(phases.New(db, nil)), export(t, map[string]string{
			"contacts.csv": "id,first_name,email\nc1,Ann,ann(at)example.com\nc2,Bob,bob(at)example.com\nc1,Ann,ann@example.com\n,Nobody,x@example.com\n",
		}), 2)
		rows, err := db.Query(`SELECT reason, coalesce(reason_class, '(none)') FROM record_failures ORDER BY id`)
		require.NoError(t, err)
		defer rows.Close()
		var classes []string
		for rows.Next() {
			var reason, class string
			require.NoError(t, rows.Scan(&reason, &class))
			require.Equal(t, store.ReasonClass(reason), class, reason)
			classes = append(classes, class)
		}
		require.NoError(t, rows.Err())
		require.Len(t, classes, 4)
		require.Contains(t, classes, `email "…" is not an email address`)
		require.Contains(t, classes, "duplicate source_id")
	})
}
