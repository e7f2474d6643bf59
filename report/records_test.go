package report_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/forensics"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
	"crmimport/store/storetest"
)

// detailsDump is a dump whose run 1 skipped notes with every kind of
// detail a production ledger may hold — what the importer writes, and
// text that is no JSON, or JSON that PostgreSQL cannot read as text — and
// whose run 2 imported the contacts c-1 and c-"2" and the company co-1.
func detailsDump(t *testing.T) string {
	t.Helper()
	var slots bytes.Buffer
	w := csv.NewWriter(&slots)
	rows := [][]string{{"id", "tenant_id", "source", "kind", "source_id", "migration_id", "record_id", "action", "reason", "detail", "created_at"}}
	for i, s := range [][2]string{
		{"n-1", `{"contact_id":"c-1"}`},
		{"n-2", `{"contact_id":"c-9"}`},
		{"n-3", `not json`},
		{"n-4", `{"contact_id":"c-1"`},
		{"n-5", `{ "contact_id" : "c-\"2\"", "company_id": "co-1", "n": -1.5e3, "ok": true, "none": null }`},
		{"n-6", `{"contact_id":"c-\u0000"}`},
		{"n-7", `{"contact_id":"c-\ud800"}`},
		{"n-8", `["c-1"]`},
		{"n-9", `{"contact_id":"c-1","seen":{"at":1}}`},
	} {
		rows = append(rows, []string{string(rune('1' + i)), "t", "canonical", "note", s[0], "1", "", "skipped", "not linked to any record", s[1], "2026-01-05"})
	}
	rows = append(rows,
		[]string{"20", "t", "canonical", "contact", "c-1", "2", "1", "created", "", "", "2026-01-12"},
		[]string{"21", "t", "canonical", "contact", `c-"2"`, "2", "2", "created", "", "", "2026-01-12"},
		[]string{"22", "t", "canonical", "company", "co-1", "2", "1", "created", "", "", "2026-01-12"})
	require.NoError(t, w.WriteAll(rows))
	return writeDump(t, map[string]string{
		"migrations.csv": "id,tenant_id,source,status,duration_ms,started_at\n" +
			"1,t,canonical,succeeded,10,2026-01-05\n2,t,canonical,succeeded,10,2026-01-12\n",
		"migration_tasks.csv":   "id,migration_id,kind,status\n1,1,notes,succeeded\n2,2,contacts,succeeded\n3,2,companies,succeeded\n",
		"migration_records.csv": slots.String(),
	})
}

// TestSkipsSayWhatTheyWaitFor: the skips a run owns, each with the links
// its detail names and the kinds of those parents imported since (R3,
// R6), in plan order; a detail that is no JSON object names no parent and
// fails nothing, on both dialects. A nested value is where they differ:
// PostgreSQL 15 cannot tell valid JSON from text without reading it, and
// reads only a flat object's links (FlatDetailPG). Doctor counts the
// same skips ready to be taken over (the same SQL).
func TestSkipsSayWhatTheyWaitFor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := detailsDump(t)
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		_, err := forensics.Load(ctx, db, dir, loadTime)
		require.NoError(t, err)
		page, err := report.PageSkips(ctx, db, 1, report.SkipQuery{})
		require.NoError(t, err)
		skips := page.Records
		ready := map[string][]string{}
		for _, s := range skips {
			ready[s.SourceID] = s.Ready
		}
		nested := []string{"contact"}
		if store.DialectOf(db) == store.Postgres {
			nested = []string{}
		}
		require.Equal(t, map[string][]string{
			"n-1": {"contact"}, "n-2": {}, "n-3": {}, "n-4": {}, "n-5": {"company", "contact"},
			"n-6": {}, "n-7": {}, "n-8": {}, "n-9": nested,
		}, ready)
		require.Equal(t, map[string]string{"contact_id": "c-9"}, skips[1].Waits)
		require.Empty(t, skips[2].Waits, "no JSON: waits for nothing known")

		few, err := report.PageSkips(ctx, db, 1, report.SkipQuery{Kind: ledger.Note, Limit: 2})
		require.NoError(t, err)
		require.Len(t, few.Records, 2)
		require.Equal(t, int64(9), few.Total)
		require.Equal(t, []report.KindCount{{Kind: "note", Count: 2 + int64(len(nested))}}, few.Ready,
			"counted in the database as each skip's own Ready says")
		none, err := report.PageSkips(ctx, db, 1, report.SkipQuery{Kind: ledger.Contact})
		require.NoError(t, err)
		require.Empty(t, none.Records)

		d, err := forensics.Doctor(ctx, db, phases.New(db, nil), forensics.DoctorOptions{})
		require.NoError(t, err)
		require.Equal(t, []string{forensics.ReadyToTakeOver}, d.Names())
		require.Equal(t, int64(2+len(nested)), d.Findings[0].Count)
	})
}
