package undo_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store/storetest"
)

// TestUndoSaysAnEditWentWithTheRow (R16, SPEC §11): a row the undone run
// created and someone edited by hand since goes with its slot, and the
// undo says so — kept as removed_edited with the field edited, and told in
// its report; a row left as the run wrote it is not named.
func TestUndoSaysAnEditWentWithTheRow(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		run := w.run(export(t, updateExport("Engineer")), "canonical")
		_, err := db.Exec(`UPDATE contacts SET title = 'Chief' WHERE id = (SELECT record_id FROM migration_records
			WHERE tenant_id = ? AND kind = 'contact' AND source_id = 'c1')`, tenant)
		require.NoError(t, err)

		u := w.undo(run.ID, false)
		require.Equal(t, phases.RunSucceeded, u.Status, u.Message)
		require.Equal(t, int64(2), u.Stats[ledger.Contact].Removed, "the edited row goes too: the run made it")
		var id, edited string
		require.NoError(t, db.QueryRow(`SELECT source_id, edited FROM record_changes WHERE migration_id = ? AND change = 'removed_edited'`,
			u.ID).Scan(&id, &edited))
		require.Equal(t, "c1", id)
		require.Equal(t, `["title"]`, edited)
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM record_changes WHERE migration_id = ?`, u.ID).Scan(&n))
		require.Equal(t, 1, n, "c2, as the run wrote it, is not named")

		rep, err := report.Build(context.Background(), db, w.imp.Engine, u.ID, false)
		require.NoError(t, err)
		require.Contains(t, strings.Join(rep.Next(), "\n"),
			"1 record removed (1 contact) had been edited by hand since it was imported (title): the edits went with it")
	})
}
