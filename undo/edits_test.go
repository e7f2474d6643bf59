package undo_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer"
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

// Many rows removed at once are compared with their hashes on every CPU
// (editsOf shares them out): the rows edited by hand are each named, with
// their fields, wherever they stand among the others, and no other is.
func TestUndoNamesEveryEditAmongManyRows(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		var csv strings.Builder
		csv.WriteString("id,first_name,last_name,email,title\n")
		for i := range 1500 {
			fmt.Fprintf(&csv, "c%04d,Ann,Lee%d,ann%d@example.com,Engineer\n", i, i, i)
		}
		run, err := w.imp.Plan(ctx, importer.RunSpec{Tenant: tenant, Source: "canonical", Profile: "canonical",
			Input: export(t, map[string]string{"contacts.csv": csv.String()}), BatchSize: 2000})
		require.NoError(t, err)
		run, err = w.imp.Execute(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, phases.RunSucceeded, run.Status)
		edit := func(id, set string) {
			_, err := db.Exec(`UPDATE contacts SET `+set+` WHERE id = (SELECT record_id FROM migration_records
				WHERE tenant_id = ? AND kind = 'contact' AND source_id = ?)`, tenant, id)
			require.NoError(t, err)
		}
		edit("c0000", "title = 'Chief'")
		edit("c0701", "last_name = 'Lie'")
		edit("c0702", "title = 'Chief', first_name = 'Anne'")
		edit("c1499", "title = 'Head'")

		u := w.undo(run.ID, false)
		require.Equal(t, int64(1500), u.Stats[ledger.Contact].Removed)
		rows, err := db.Query(`SELECT source_id, edited FROM record_changes WHERE migration_id = ? AND change = 'removed_edited' ORDER BY source_id`, u.ID)
		require.NoError(t, err)
		defer rows.Close()
		got := map[string]string{}
		for rows.Next() {
			var id, edited string
			require.NoError(t, rows.Scan(&id, &edited))
			got[id] = edited
		}
		require.NoError(t, rows.Err())
		require.Equal(t, map[string]string{
			"c0000": `["title"]`,
			"c0701": `["last_name"]`,
			"c0702": `["first_name","title"]`,
			"c1499": `["title"]`,
		}, got)
	})
}

// A row whose slot took a skip over is removed by its undo as every row
// it created is, while its slot is given the skip back instead of
// deleted: an edit made by hand since still goes with the row by name
// (SPEC §11), its hashes read before the skip is given back.
func TestUndoSaysAnEditWentWithARowThatTookASkipOver(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		notes := "id,body,contact_id\nn1,Call Bob back,c2\nn2,Send the quote,c1\n"
		first := w.run(export(t, map[string]string{
			"contacts.csv": "id,first_name,last_name,email\nc1,Ann,Lee,ann@example.com\n",
			"notes.csv":    notes,
		}), "canonical")
		require.Equal(t, int64(1), first.Stats[ledger.Note].Skipped, "n1 waits for its contact")
		second := w.run(export(t, map[string]string{
			"contacts.csv": "id,first_name,last_name,email\nc1,Ann,Lee,ann@example.com\nc2,Bob,Ray,bob@example.com\n",
			"notes.csv":    notes,
		}), "canonical")
		require.Equal(t, int64(1), second.Stats[ledger.Note].Imported, "n1 takes its skip over")
		_, err := db.Exec(`UPDATE notes SET body = 'Called: no answer' WHERE id = (SELECT record_id FROM migration_records
			WHERE tenant_id = ? AND kind = 'note' AND source_id = 'n1')`, tenant)
		require.NoError(t, err)

		u := w.undo(second.ID, false)
		require.Equal(t, phases.RunSucceeded, u.Status, u.Message)
		var action string
		require.NoError(t, db.QueryRow(`SELECT action FROM migration_records WHERE tenant_id = ? AND kind = 'note' AND source_id = 'n1'`,
			tenant).Scan(&action))
		require.Equal(t, "skipped", action, "n1's slot has its skip back")
		var id, edited string
		require.NoError(t, db.QueryRow(`SELECT source_id, edited FROM record_changes WHERE migration_id = ? AND change = 'removed_edited'`,
			u.ID).Scan(&id, &edited))
		require.Equal(t, "n1", id)
		require.Equal(t, `["body"]`, edited)
	})
}
