package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/fixtures/gen"
	"crmimport/importer"
	"crmimport/phases"
	"crmimport/store"
)

// The schema floor is only a floor if it does the work crmimport does: on a
// clean export and on a realistic one (failed, skipped, duplicate, matched
// and unlinked records), the same rows in every table, the same links
// resolved, the same slots. Compared with a real import of the same files.
func TestSchemaFloorWritesWhatAnImportWrites(t *testing.T) {
	for _, tc := range []struct {
		shape    string
		contacts int
	}{{gen.ShapeClean, 300}, {gen.ShapeRealistic, 3000}} {
		t.Run(tc.shape, func(t *testing.T) {
			t.Parallel()
			schemaFloorAgainstImport(t, gen.Config{Contacts: tc.contacts, Seed: 7, Shape: tc.shape, NoteMax: 300})
		})
	}
}

func schemaFloorAgainstImport(t *testing.T, cfg gen.Config) {
	ctx := context.Background()
	dir := t.TempDir()
	export := filepath.Join(dir, "export")
	exp, err := gen.Write(mkdir(export), cfg)
	require.NoError(t, err)

	floorDB := filepath.Join(dir, "floor.db")
	require.NoError(t, schemaFloor(export, floorDB, floorOptions{ledger: true, fk: true, keys: true}))

	crmDB := filepath.Join(dir, "crm.db")
	db, err := store.Open(ctx, crmDB)
	require.NoError(t, err)
	imp := importer.New(phases.New(db, nil))
	run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "bench", Source: "canonical", Input: export})
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, exp.Status.First, string(run.Status))
	require.NoError(t, db.Close())

	// What each database holds, as rows of text: every target row with its
	// links (as the linked record's source id, through the ledger), every
	// slot's key and action.
	const rows = `
SELECT 'company', s.source_id, c.name, c.domain_key, NULL, NULL, NULL FROM companies c JOIN migration_records s ON s.record_type = 'companies' AND s.record_id = c.id
UNION ALL
SELECT 'user', s.source_id, u.email, u.email_key, u.name, u.active, NULL
  FROM users u JOIN migration_records s ON s.record_type = 'users' AND s.record_id = u.id
UNION ALL
SELECT 'contact', s.source_id, c.email, c.email_key, (SELECT source_id FROM migration_records WHERE record_type = 'companies' AND record_id = c.company_id), NULL, NULL
  FROM contacts c JOIN migration_records s ON s.record_type = 'contacts' AND s.record_id = c.id
UNION ALL
SELECT 'lead', s.source_id, l.email, l.status, (SELECT source_id FROM migration_records WHERE record_type = 'users' AND record_id = l.owner_id), NULL, NULL
  FROM leads l JOIN migration_records s ON s.record_type = 'leads' AND s.record_id = l.id
UNION ALL
SELECT 'deal', s.source_id, d.name, d.amount, (SELECT source_id FROM migration_records WHERE record_type = 'companies' AND record_id = d.company_id),
  (SELECT source_id FROM migration_records WHERE record_type = 'contacts' AND record_id = d.contact_id), NULL
  FROM deals d JOIN migration_records s ON s.record_type = 'deals' AND s.record_id = d.id
UNION ALL
SELECT 'note', s.source_id, n.body, NULL, (SELECT source_id FROM migration_records WHERE record_type = 'contacts' AND record_id = n.contact_id),
  (SELECT source_id FROM migration_records WHERE record_type = 'companies' AND record_id = n.company_id),
  (SELECT source_id FROM migration_records WHERE record_type = 'deals' AND record_id = n.deal_id)
  FROM notes n JOIN migration_records s ON s.record_type = 'notes' AND s.record_id = n.id
UNION ALL
SELECT 'activity', s.source_id, a.subject, a.done, (SELECT source_id FROM migration_records WHERE record_type = 'contacts' AND record_id = a.contact_id),
  (SELECT source_id FROM migration_records WHERE record_type = 'companies' AND record_id = a.company_id),
  (SELECT source_id FROM migration_records WHERE record_type = 'deals' AND record_id = a.deal_id)
  FROM activities a JOIN migration_records s ON s.record_type = 'activities' AND s.record_id = a.id
UNION ALL
SELECT 'email', s.source_id, e.subject, e."from", (SELECT source_id FROM migration_records WHERE record_type = 'contacts' AND record_id = e.contact_id),
  (SELECT source_id FROM migration_records WHERE record_type = 'companies' AND record_id = e.company_id),
  (SELECT source_id FROM migration_records WHERE record_type = 'deals' AND record_id = e.deal_id)
  FROM emails e JOIN migration_records s ON s.record_type = 'emails' AND s.record_id = e.id
UNION ALL
SELECT 'slot', kind, source_id, action, reason, detail, NULL FROM migration_records
ORDER BY 1, 2, 3`
	floor, crm := dump(t, floorDB, rows), dump(t, crmDB, rows)
	records := 0
	for _, n := range exp.Records {
		records += n
	}
	var slots, failed, skipped, matched int
	for _, o := range exp.First {
		slots += o.Imported + o.Skipped
		failed, skipped, matched = failed+o.Failed, skipped+o.Skipped, matched+o.Matched
	}
	if cfg.Shape == gen.ShapeRealistic {
		require.Positive(t, failed)
		require.Positive(t, skipped)
		require.Positive(t, matched)
	}
	// A slot per record imported or skipped, a row per record imported
	// (a matched one names a row already there, so its row is listed
	// twice).
	require.Len(t, crm, slots+slots-skipped)
	require.Equal(t, crm, floor)
}

func dump(t *testing.T, path, query string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	// The query finds each link's source id by its row: an index of the
	// test's own (not the schema's) keeps that from a scan per link.
	_, err = db.Exec(`CREATE INDEX IF NOT EXISTS test_slot_of_row ON migration_records (record_type, record_id)`)
	require.NoError(t, err)
	rows, err := db.Query(query)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v [7]sql.NullString
		require.NoError(t, rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]))
		line := ""
		for _, x := range v {
			line += "|" + x.String
			if !x.Valid {
				line += "∅"
			}
		}
		out = append(out, line)
	}
	require.NoError(t, rows.Err())
	return out
}
