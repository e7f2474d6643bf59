package forensics_test

import (
	"bytes"
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/forensics"
	"crmimport/importer"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store/storetest"
)

// TestWhyGroupsTheLedger: the write-up's query as a command, on the dump of
// its incident: the truth — every note and activity skipped by run 1, days
// after run 2 "processed" them — in five lines.
func TestWhyGroupsTheLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		loadFixture(t, db, "poisoned-ledger")
		e := phases.New(db, nil)
		g, err := forensics.Why(ctx, db, e, "acme", "", 0)
		require.NoError(t, err)
		require.Equal(t, int64(59), g.Total)
		require.Equal(t, []forensics.Group{
			{Kind: ledger.Company, Source: "hubspot", Action: "created", Run: 1, RunStatus: "failed", Count: 3},
			{Kind: ledger.Contact, Source: "hubspot", Action: "created", Run: 2, RunStatus: "succeeded", Count: 8},
			{Kind: ledger.Deal, Source: "hubspot", Action: "created", Run: 2, RunStatus: "succeeded", Count: 4},
			{Kind: ledger.Note, Source: "hubspot", Action: "skipped", Reason: "not linked to any record", Run: 1, RunStatus: "failed", Count: 24},
			{Kind: ledger.Activity, Source: "hubspot", Action: "skipped", Reason: "not linked to any record", Run: 1, RunStatus: "failed", Count: 20},
		}, g.Groups)

		g, err = forensics.Why(ctx, db, e, "acme", ledger.Note, 0)
		require.NoError(t, err)
		require.Len(t, g.Groups, 1)
		require.Equal(t, int64(24), g.Total)
		g, err = forensics.Why(ctx, db, e, "acme", "", 2)
		require.NoError(t, err)
		require.Equal(t, int64(12), g.Total, "run 2 wrote 8 contacts and 4 deals, nothing else")
		g, err = forensics.Why(ctx, db, e, "nobody", "", 0)
		require.NoError(t, err)
		require.Empty(t, g.Groups)

		var b bytes.Buffer
		g, err = forensics.Why(ctx, db, e, "acme", "", 0)
		require.NoError(t, err)
		forensics.WriteGrouping(&b, g)
		require.Contains(t, b.String(), "the ledger of tenant acme: 59 slots, by kind, action, reason and run")
		require.Regexp(t, `note\s+hubspot\s+skipped\s+not linked to any record\s+1 \(failed\)\s+24`, b.String())
	})
}

// TestStoryOfOneSlot: which run claimed a slot, when, with which reason,
// that run's status, and what came after: the later run that left it as it
// was, and its parent imported since.
func TestStoryOfOneSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		loadFixture(t, db, "poisoned-ledger")
		e := phases.New(db, nil)
		st, err := forensics.StoryOf(ctx, db, e, "acme", ledger.Note, "n-01")
		require.NoError(t, err)
		require.Len(t, st.Slots, 1)
		s := st.Slots[0]
		require.Equal(t, "skipped", s.Action)
		require.Equal(t, "not linked to any record", s.Reason)
		require.Equal(t, "2026-01-05T09:00:00.123456Z", s.ClaimedAt)
		require.Equal(t, &forensics.RunRef{ID: 1, Status: "failed", StartedAt: "2026-01-05T09:00:00.123456Z",
			FinishedAt: "2026-01-05T09:41:07.500000Z", Loaded: true}, s.Run)
		require.Len(t, s.Later, 1)
		require.Equal(t, int64(2), s.Later[0].ID)
		require.Equal(t, []forensics.ParentRef{{Field: "contact_id", Kind: ledger.Contact, SourceID: "c-01", Action: "created", Run: 2}}, s.Parents)
		require.Nil(t, s.Row)

		var b bytes.Buffer
		forensics.WriteStory(&b, st)
		require.Contains(t, b.String(), `note n-01 · tenant acme · source hubspot`)
		require.Contains(t, b.String(), `claimed by run 1 at 2026-01-05T09:00:00.123456Z; run 1 is failed (loaded from a dump)`)
		require.Contains(t, b.String(), `since then, run 2 (succeeded) processed notes and left this skip as it was: a stale verdict (R3)`)
		require.Contains(t, b.String(), `its contact c-01 is created now, by run 2: a run of notes takes this skip over (R3)`)

		st, err = forensics.StoryOf(ctx, db, e, "acme", "", "c-01")
		require.NoError(t, err)
		require.Len(t, st.Slots, 1, "any kind")
		require.Equal(t, &forensics.RowRef{Table: "contacts", ID: 125001, Placeholder: true}, st.Slots[0].Row)
	})
}

// TestStoryTellsFailuresAndMissingRows: a record that failed has no slot,
// but its story tells each failed attempt with file and line (R4); a final
// slot whose row is gone says so.
func TestStoryTellsFailuresAndMissingRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		loadFixture(t, db, "orphan-slots")
		e := phases.New(db, nil)
		imp := importer.New(e)
		export := writeDump(t, map[string]string{"contacts.csv": "id,first_name,email\nc-1,Ann,ann@tyrell.example\nc-9,Bob,not-an-address\n"})
		run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "tyrell", Source: "canonical", Input: export})
		require.NoError(t, err)
		run, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, phases.RunPartial, run.Status)

		st, err := forensics.StoryOf(ctx, db, e, "tyrell", ledger.Contact, "c-9")
		require.NoError(t, err)
		require.Empty(t, st.Slots)
		require.Len(t, st.Failures, 1)
		require.Equal(t, forensics.FailureRef{Run: 2, Source: "canonical", Kind: ledger.Contact, File: "contacts.csv", Line: 3,
			Reason: st.Failures[0].Reason}, st.Failures[0])
		require.Contains(t, st.Failures[0].Reason, "not-an-address")
		var b bytes.Buffer
		forensics.WriteStory(&b, st)
		require.Contains(t, b.String(), `no slot of tenant tyrell has the source id "c-9"`)
		require.Contains(t, b.String(), "run 2 (source canonical): contact c-9 at contacts.csv:3:")

		st, err = forensics.StoryOf(ctx, db, e, "tyrell", ledger.Contact, "c-1")
		require.NoError(t, err)
		require.Equal(t, &forensics.RowRef{Table: "contacts", ID: 11, Missing: true}, st.Slots[0].Row,
			"run 2 found c-1 already there (R2) though its row is gone")
		b.Reset()
		forensics.WriteStory(&b, st)
		require.Contains(t, b.String(), "its row, contacts 11, is MISSING")
	})
}

// TestStoryTellsUpdates (R17): `ledger why` of a slot whose row runs
// updated tells each update — the run, when it started, the fields — and
// the undo that reverted one; a slot never updated has none.
func TestStoryTellsUpdates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		loadFixture(t, db, "poisoned-ledger")
		e := phases.New(db, nil)
		st, err := forensics.StoryOf(ctx, db, e, "acme", ledger.Contact, "c-01")
		require.NoError(t, err)
		require.Len(t, st.Slots, 1)
		require.Equal(t, []forensics.UpdateRef{}, st.Slots[0].Updates, "never updated")
		s := st.Slots[0]
		for _, u := range []struct {
			run      int64
			fields   string
			reverted any
		}{{2, `["email","phone"]`, nil}, {1, `["last_name"]`, 2}} {
			_, err := db.ExecContext(ctx, `INSERT INTO record_updates (tenant_id, source, kind, source_id, record_id, migration_id,
				before_values, after_digest, after_hashes, fields, reverted_by) VALUES ('acme', ?, 'contact', 'c-01', ?, ?, '{}', 1, '{}', ?, ?)`,
				s.Source, s.Row.ID, u.run, u.fields, u.reverted)
			require.NoError(t, err)
		}
		st, err = forensics.StoryOf(ctx, db, e, "acme", ledger.Contact, "c-01")
		require.NoError(t, err)
		require.Equal(t, []forensics.UpdateRef{
			{Run: 1, StartedAt: "2026-01-05T09:00:00.123456Z", Fields: []string{"last_name"}, RevertedBy: 2},
			{Run: 2, StartedAt: st.Slots[0].Updates[1].StartedAt, Fields: []string{"email", "phone"}},
		}, st.Slots[0].Updates)
		require.NotEmpty(t, st.Slots[0].Updates[1].StartedAt)
		var b bytes.Buffer
		forensics.WriteStory(&b, st)
		require.Contains(t, b.String(), "  updated by run 1 (started 2026-01-05T09:00:00.123456Z): last_name; reverted by run 2 (undo)\n")
		require.Contains(t, b.String(), "  updated by run 2 (started "+st.Slots[0].Updates[1].StartedAt+"): email, phone\n")
	})
}

// TestStoryTellsLinksAndChanges (R6a, R17; issue 27 item 2): a slot's
// story tells the link its row waited for and the run that completed it
// (relinked), the link still waiting, and what a later run found changed
// at the source, with the fields before and after.
func TestStoryTellsLinksAndChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		e := phases.New(db, nil)
		imp := importer.New(e)
		run := func(files map[string]string) {
			t.Helper()
			r, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", Input: writeDump(t, files)})
			require.NoError(t, err)
			_, err = imp.Execute(ctx, r.ID)
			require.NoError(t, err)
		}
		run(map[string]string{"contacts.csv": "id,first_name,title,company_id\nc-1,Ann,Buyer,co-9\nc-2,Bob,Clerk,co-77\n"})
		run(map[string]string{"companies.csv": "id,name\nco-9,Initech\n",
			"contacts.csv": "id,first_name,title,company_id\nc-1,Ann,Head buyer,co-9\nc-2,Bob,Clerk,co-77\n"})

		st, err := forensics.StoryOf(ctx, db, e, "acme", ledger.Contact, "c-1")
		require.NoError(t, err)
		s := st.Slots[0]
		require.Equal(t, []forensics.LinkRef{{Field: "company_id", Kind: ledger.Company, SourceID: "co-9", Run: 1, CompletedBy: 2}}, s.Links)
		require.Len(t, s.Changes, 1)
		require.Equal(t, forensics.ChangeRef{Run: 2, Change: "outdated", Fields: []string{"title"}, Edited: []string{},
			Values: []report.FieldChange{{Field: "title", Before: "Buyer", After: "Head buyer"}}}, s.Changes[0])
		var b bytes.Buffer
		forensics.WriteStory(&b, st)
		require.Contains(t, b.String(), "  its company_id, company co-9, was completed by run 2 once the company arrived: relinked (R6a)\n")
		require.Contains(t, b.String(), "  run 2 found it changed at the source (title) and left it as it was: outdated\n")

		st, err = forensics.StoryOf(ctx, db, e, "acme", ledger.Contact, "c-2")
		require.NoError(t, err)
		require.Equal(t, []forensics.ChangeRef{}, st.Slots[0].Changes, "unchanged at the source")
		b.Reset()
		forensics.WriteStory(&b, st)
		require.Contains(t, b.String(), "  its company_id waits for company co-77: completed when a run imports it (R6a)\n")
	})
}
