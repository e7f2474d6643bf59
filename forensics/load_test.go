package forensics_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/fixtures/gen"
	"crmimport/forensics"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
)

// writeDump writes files (name -> content) into a new dump folder.
func writeDump(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	return dir
}

// psqlRuns is migrations as `psql \copy (…) TO … CSV HEADER` writes it:
// t/f booleans, NULL as an empty field, an empty string quoted, timestamps
// with a zone, a multi-line quoted message, and columns crmimport does
// not know (api_token, updated_at) or lacks (options).
const psqlRuns = `id,tenant_id,source,status,current_phase,cancellation_requested,stats,started_at,finished_at,duration_ms,message,api_token,updated_at
1,acme,hubspot,failed,5,f,"{""contacts"":{""failed"":8},""notes"":{""skipped"":2}}",2026-01-05 09:00:00.123456+00,2026-01-05 10:00:00+01,3600000,"Migration failed:
Validation failed",secret,2026-01-05 09:41:07+00
2,acme,hubspot,running,2,t,,2026-01-12T09:00:00Z,,,"",,2026-01-12 09:00:00
`

const psqlTasks = `id,migration_id,kind,phase,status,checkpoint,attempts,last_error,job_id,updated_at
1,1,contacts,2,failed,"{""rows"":40,""line"":41}",3,Email is invalid,job-1,2026-01-05 09:30:00+00
2,1,Notes,4,succeeded,,1,,job-2,
3,2,contact,,running,12345,1,,job-3,2026-01-12 09:01:00.5+00
`

const psqlSlots = `id,tenant_id,source,kind,source_id,migration_id,record_type,record_id,action,reason,detail,created_at
7,acme,hubspot,companies,co-1,1,Company,501,created,,,2026-01-05 09:00:01+00
8,acme,hubspot,note,n-1,1,,,skipped,not linked to any record,"{""contact_id"":""c-1""}",2026-01-05 09:00:02.000001+00
9,acme,hubspot,contact,c-1,2,contacts,,created,,,2026-01-12 09:00:30Z
10,acme,salesforce,company,001A,1,companies,501,matched,,,2026-01-05 09:00:03+00
`

// TestLoadReadsPsqlCSV: every form psql's CSV gives is read as the
// database's own, ids kept, plural kinds singular, unknown columns ignored,
// missing ones defaulted.
func TestLoadReadsPsqlCSV(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		dir := writeDump(t, map[string]string{"migrations.csv": psqlRuns, "migration_tasks.csv": psqlTasks, "migration_records.csv": psqlSlots})
		sum, err := forensics.Load(context.Background(), db, dir, loadTime)
		require.NoError(t, err)
		require.Equal(t, []int64{1, 2}, sum.Runs)
		require.Equal(t, 3, sum.Tasks)
		require.Equal(t, map[string]int{"created": 2, "matched": 1, "skipped": 1}, sum.Slots)
		require.Equal(t, map[string]int{"companies": 1, "contacts": 1}, sum.Placeholders, "a matched and a created slot share one row")
		require.Equal(t, []string{"task 3: checkpoint 12345 is not crmimport's {rows, line}: loaded as the start",
			"run 1: its tasks carry no counters: each took its kind's from the run's stats"}, sum.Notices)

		require.Equal(t, [][]string{
			{"1", "failed", "5", "0", `{"contact":{"imported":0,"unchanged":0,"skipped":0,"failed":8,"matched":0,"unlinked":0,"unowned":0,"relinked":0,"duplicate":0,"updated":0,"overwritten":0,"outdated":0,"conflict":0,"deleted_since":0,"excluded":0},"note":{"imported":0,"unchanged":0,"skipped":2,"failed":0,"matched":0,"unlinked":0,"unowned":0,"relinked":0,"duplicate":0,"updated":0,"overwritten":0,"outdated":0,"conflict":0,"deleted_since":0,"excluded":0}}`,
				"{}", "2026-01-05T09:00:00.123456Z", "2026-01-05T09:00:00.000000Z", "3600000", "Migration failed:\nValidation failed", "NULL", "NULL", dir},
			{"2", "running", "2", "1", "NULL", "{}", "2026-01-12T09:00:00.000000Z", "NULL", "NULL", "NULL", "NULL", "NULL", dir},
		}, query(t, db, `SELECT id, status, current_phase, cancellation_requested, stats, options, started_at, finished_at, duration_ms,
			message, owner_host, heartbeat_at, dump FROM migrations ORDER BY id`),
			"t/f, NULL and empty, zones; a quoted empty message is NULL too; no owner here")
		require.Equal(t, [][]string{
			{"1", "1", "contact", "2", "failed", `{"rows":40,"line":41}`, "3", "Email is invalid", "NULL", "2026-01-05T09:30:00.000000Z"},
			{"2", "1", "note", "4", "succeeded", `{"rows":0,"line":0}`, "1", "NULL", "NULL", "2026-01-05T09:00:00.123456Z"},
			{"3", "2", "contact", "2", "running", `{"rows":0,"line":0}`, "1", "NULL", "NULL", "2026-01-12T09:01:00.500000Z"},
		}, query(t, db, `SELECT id, migration_id, kind, phase, status, checkpoint, attempts, last_error, file, updated_at
			FROM migration_tasks ORDER BY id`), "plural and capitalised kinds are singular; a missing phase is the kind's; no file here")
		require.Equal(t, [][]string{{"1", "0", "8"}, {"2", "2", "0"}, {"3", "0", "0"}},
			query(t, db, `SELECT id, skipped, failed FROM migration_tasks ORDER BY id`), "the run's stats, kind by kind, where its tasks carry none")
		require.Equal(t, [][]string{
			{"7", "hubspot", "company", "co-1", "1", "companies", "501", "created", "NULL", "NULL", "2026-01-05T09:00:01.000000Z"},
			{"8", "hubspot", "note", "n-1", "1", "NULL", "NULL", "skipped", "not linked to any record", `{"contact_id":"c-1"}`, "2026-01-05T09:00:02.000001Z"},
			{"9", "hubspot", "contact", "c-1", "2", "contacts", "1", "created", "NULL", "NULL", "2026-01-12T09:00:30.000000Z"},
			{"10", "salesforce", "company", "001A", "1", "companies", "501", "matched", "NULL", "NULL", "2026-01-05T09:00:03.000000Z"},
		}, query(t, db, `SELECT id, source, kind, source_id, migration_id, record_type, record_id, action, reason, detail, created_at
			FROM migration_records ORDER BY id`), "a created slot without a record_id gets a placeholder row of its own")
		require.Equal(t, [][]string{{"501", "acme", "(loaded from a dump: company co-1)", "1"}},
			query(t, db, `SELECT id, tenant_id, name, from_dump FROM companies`))
		require.Equal(t, [][]string{{"1", "(loaded from a dump: contact c-1)", "1"}}, query(t, db, `SELECT id, last_name, from_dump FROM contacts`))
		require.Equal(t, [][]string{{"11"}}, query(t, db, `SELECT next FROM id_allocators WHERE name = 'migration_records'`), "new slots are numbered past the loaded ones")

		run, err := phases.LoadRun(context.Background(), db, 2)
		require.NoError(t, err)
		require.True(t, phases.New(db, nil).Interrupted(run), "a dump's running run has no live owner here")
	})
}

// TestLoadReadsJSONLines: the same tables as JSON Lines, booleans and
// numbers as JSON gives them, objects as their JSON text.
func TestLoadReadsJSONLines(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		loadFixture(t, db, "ready-to-take-over")
		require.Equal(t, [][]string{
			{"1", "partial", "4", "0", `{"dump_options":{"batch":1000}}`, "2000", "2026-01-05T09:00:00.123456Z"},
			{"2", "succeeded", "2", "0", `{"dump_options":{"batch":1000}}`, "1000", "2026-01-12T09:00:00.000000Z"},
		}, query(t, db, `SELECT id, status, current_phase, cancellation_requested, options, duration_ms, started_at FROM migrations ORDER BY id`))
		require.Equal(t, [][]string{{"1", "contact"}, {"2", "note"}, {"3", "contact"}},
			query(t, db, `SELECT id, kind FROM migration_tasks ORDER BY id`), "plural kinds are singular")
		require.Equal(t, [][]string{{"n-2", "skipped", `{"contact_id":"c-2"}`}},
			query(t, db, `SELECT source_id, action, detail FROM migration_records WHERE action = 'skipped'`))
	})
}

// TestLoadRefusesConflictingIDs: a dump keeps its ids, so a file that
// already holds them refuses the whole load and names them; nothing of the
// second load is written.
func TestLoadRefusesConflictingIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		loadFixture(t, db, "stranded-retry")
		before := query(t, db, `SELECT (SELECT count(*) FROM migrations), (SELECT count(*) FROM migration_tasks),
			(SELECT count(*) FROM migration_records), (SELECT count(*) FROM companies), (SELECT next FROM id_allocators WHERE name = 'migration_records')`)

		_, err := forensics.Load(ctx, db, filepath.Join(dumps, "stranded-retry"), loadTime)
		var conflict *forensics.ConflictError
		require.ErrorAs(t, err, &conflict)
		require.Equal(t, []int64{1}, conflict.Runs)
		require.Equal(t, []int64{1, 2, 3, 4}, conflict.Tasks)
		require.Equal(t, 12, conflict.Slots.N)
		require.Equal(t, int64(12), conflict.SlotIDs.N)
		require.Contains(t, err.Error(), "the database already holds run 1; tasks 1–4; the slots globex/pipedrive company co-1, ")
		require.Contains(t, err.Error(), "(and 4 more); slot ids 1–12; the target rows companies 1–4, deals 1–3, activities 1–5")
		require.Contains(t, err.Error(), "nothing was loaded")
		require.Equal(t, before, query(t, db, `SELECT (SELECT count(*) FROM migrations), (SELECT count(*) FROM migration_tasks),
			(SELECT count(*) FROM migration_records), (SELECT count(*) FROM companies), (SELECT next FROM id_allocators WHERE name = 'migration_records')`))

		// Another dump whose run id only is taken: refused too.
		other := writeDump(t, map[string]string{"migrations.csv": "id,tenant_id,source,status,started_at\n1,initech,canonical,succeeded,2026-01-05 09:00:00+00\n"})
		_, err = forensics.Load(ctx, db, other, loadTime)
		require.ErrorAs(t, err, &conflict)
		require.Equal(t, []int64{1}, conflict.Runs)
		require.Empty(t, conflict.Tasks)
	})
}

// TestLoadRefusesSecondLiveRun: a dump's running run of a tenant that
// already has one here is refused by the one-live-run index (R13), and so
// its tasks, which name it, are not written either.
func TestLoadRefusesSecondLiveRun(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		loadFixture(t, db, "unfinalized")
		dir := writeDump(t, map[string]string{"migrations.csv": "id,tenant_id,source,status,started_at\n9,soylent,canonical,running,2026-02-05 09:00:00+00\n",
			"migration_tasks.csv": "id,migration_id,kind,status\n9,9,contacts,running\n"})
		_, err := forensics.Load(context.Background(), db, dir, loadTime)
		var conflict *forensics.ConflictError
		require.ErrorAs(t, err, &conflict)
		require.Contains(t, err.Error(), "tenant soylent already has a running run here (run 2)")
	})
}

// TestLoadRejectsBadRows: a value crmimport does not know is refused with
// its file and line, and nothing is loaded.
func TestLoadRejectsBadRows(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		files map[string]string
		want  []string
	}{
		"UnknownRunStatus": {map[string]string{"migrations.csv": "id,tenant_id,source,status,started_at\n1,a,s,succeeded,2026-01-05\n2,a,s,done,2026-01-05\n"},
			[]string{`migrations.csv:3: status: "done" is not a run status (one of: running, succeeded, partial, failed, cancelled)`}},
		"UnknownTaskKindAndStatus": {map[string]string{
			"migrations.csv":      "id,tenant_id,source,status,started_at\n1,a,s,failed,2026-01-05\n",
			"migration_tasks.csv": "id,migration_id,kind,status\n1,1,tickets,pending\n2,1,contacts,queued\n"},
			[]string{`migration_tasks.csv:2: kind: unknown kind "tickets"`, `migration_tasks.csv:3: status: "queued" is not a task status`}},
		"BadTimestampOnLineOfMultilineRow": {map[string]string{
			"migrations.csv": "id,tenant_id,source,status,message,started_at\n1,a,s,failed,\"two\nlines\",2026-01-05\n2,a,s,failed,x,yesterday\n"},
			[]string{`migrations.csv:4: started_at: "yesterday" is not a timestamp`}},
		"UnknownAction": {map[string]string{"migration_records.jsonl": `{"tenant_id":"a","source":"s","kind":"note","source_id":"n-1","action":"ignored","created_at":"2026-01-05"}` + "\n"},
			[]string{`migration_records.jsonl:1: action: "ignored" is not a slot action`}},
		"TaskOfMissingRun": {map[string]string{"migration_tasks.csv": "id,migration_id,kind,status\n1,4,contacts,pending\n"},
			[]string{"migration_tasks.csv:2: task 1 belongs to run 4, which the dump's migrations do not hold"}},
		"MissingColumn": {map[string]string{"migrations.csv": "id,tenant_id,status,started_at\n1,a,failed,2026-01-05\n"},
			[]string{"migrations.csv:1: the header has no source column"}},
		"RaggedRow": {map[string]string{"migrations.csv": "id,tenant_id,source,status,started_at\n1,a,s,failed\n"},
			[]string{"migrations.csv:2: wrong number of fields"}},
		"TwoForms": {map[string]string{"migrations.csv": "id\n", "migrations.jsonl": "\n"}, []string{"holds both migrations.csv and migrations.jsonl"}},
		// What no single row shows, across the whole dump.
		"RunIDTwice": {map[string]string{"migrations.csv": "id,tenant_id,source,status,started_at\n1,a,s,failed,2026-01-05\n1,b,s,failed,2026-01-05\n"},
			[]string{"migrations.csv:3: run id 1 is already on line 2"}},
		"TwoRunningRunsOfATenant": {map[string]string{"migrations.jsonl": `{"id":1,"tenant_id":"a","source":"s","status":"running","started_at":"2026-01-05"}` + "\n" +
			`{"id":2,"tenant_id":"a","source":"s","status":"running","started_at":"2026-01-05"}` + "\n"},
			[]string{"migrations.jsonl:2: tenant a has two running runs, 1 and 2: at most one run of a tenant is live (R13)"}},
		"TaskIDTwice": {map[string]string{
			"migrations.csv":      "id,tenant_id,source,status,started_at\n1,a,s,failed,2026-01-05\n",
			"migration_tasks.csv": "id,migration_id,kind,status\n1,1,contacts,failed\n1,1,notes,pending\n"},
			[]string{"migration_tasks.csv:3: task id 1 is already on line 2"}},
		"SlotKeyTwice": {map[string]string{"migration_records.csv": "tenant_id,source,kind,source_id,action,created_at\n" +
			"a,s,note,n-1,skipped,2026-01-05\na,s,note,n-2,skipped,2026-01-05\na,s,notes,n-1,created,2026-01-05\n"},
			[]string{"migration_records.csv:4: the slot a/s note n-1 is already on line 2"}},
		"SlotIDTwice": {map[string]string{"migration_records.csv": "id,tenant_id,source,kind,source_id,action,created_at\n" +
			"7,a,s,note,n-1,skipped,2026-01-05\n3,a,s,note,n-2,skipped,2026-01-05\n7,a,s,note,n-3,skipped,2026-01-05\n"},
			[]string{"migration_records.csv:4: slot id 7 is already on line 2"}},
		"RowOfTwoTenants": {map[string]string{"migration_records.csv": "tenant_id,source,kind,source_id,record_id,action,created_at\n" +
			"a,s,company,co-1,5,created,2026-01-05\nb,s,company,co-1,5,matched,2026-01-05\n"},
			[]string{"migration_records.csv:3: company co-1 of tenant b names companies row 5, which line 2 gives to tenant a: a row belongs to one tenant"}},
		"NoDump": {map[string]string{"notes.csv": "id\n"}, []string{"holds no dump"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T, db *sql.DB) {
				_, err := forensics.Load(context.Background(), db, writeDump(t, tc.files), loadTime)
				require.Error(t, err)
				var de *forensics.DumpError
				require.True(t, errors.As(err, &de), "%v", err)
				for _, w := range tc.want {
					require.Contains(t, err.Error(), w)
				}
				require.Equal(t, [][]string{{"0", "0", "0"}}, query(t, db, `SELECT (SELECT count(*) FROM migrations),
					(SELECT count(*) FROM migration_tasks), (SELECT count(*) FROM migration_records)`))
			})
		})
	}
}

// TestLoadNoticesSlotsOfRunsItDoesNotHold: slots may name runs that the
// dump's migrations leave out; they load, and the summary says which.
func TestLoadNoticesSlotsOfRunsItDoesNotHold(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		dir := writeDump(t, map[string]string{
			"migrations.csv": "id,tenant_id,source,status,started_at\n1,a,s,succeeded,2026-01-05\n",
			"migration_records.csv": "tenant_id,source,kind,source_id,migration_id,action,created_at\n" +
				"a,s,note,n-1,1,skipped,2026-01-05\na,s,note,n-2,7,skipped,2026-01-05\na,s,note,n-3,5,skipped,2026-01-05\na,s,note,n-4,6,skipped,2026-01-05\n",
		})
		sum, err := forensics.Load(context.Background(), db, dir, loadTime)
		require.NoError(t, err)
		require.Equal(t, []string{"the dump has no migration_tasks (.csv or .jsonl): none loaded",
			"slots name runs the dump's migrations do not hold: 5–7"}, sum.Notices)
		require.Equal(t, map[string]int{"skipped": 4}, sum.Slots)
	})
}

// TestParseDumpTimes: the timestamps a dump holds.
func TestParseDumpTimes(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		rows := "id,tenant_id,source,status,started_at\n"
		for i, s := range []string{"2026-01-05 09:00:00.123456+00", "2026-01-05T09:00:00Z", "2026-01-05 11:30:00+02:30",
			"2026-01-05 09:00:00", "2026-01-05T04:00:00-05", "2026-01-05 09:00:00.5 +00:00", "2026-01-05"} {
			rows += string(rune('1'+i)) + ",t" + string(rune('1'+i)) + ",s,succeeded," + s + "\n"
		}
		_, err := forensics.Load(context.Background(), db, writeDump(t, map[string]string{"migrations.csv": rows}), loadTime)
		require.NoError(t, err)
		require.Equal(t, [][]string{
			{"2026-01-05T09:00:00.123456Z"}, {"2026-01-05T09:00:00.000000Z"}, {"2026-01-05T09:00:00.000000Z"},
			{"2026-01-05T09:00:00.000000Z"}, {"2026-01-05T09:00:00.000000Z"}, {"2026-01-05T09:00:00.500000Z"}, {"2026-01-05T00:00:00.000000Z"},
		}, query(t, db, `SELECT started_at FROM migrations ORDER BY id`))
	})
}

// TestLoadStreamsTheDump: a load keeps what it reads in the database, not
// in Go: the peak of the Go heap while loading a dump of 100,000 slots is
// within a few MiB of that of a dump of 5,000 (held whole, the larger one
// took 100 MiB more). Not parallel: the heap is the process's.
func TestLoadStreamsTheDump(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		peak := map[int]uint64{}
		for i, n := range []int{5_000, 100_000} {
			dir := t.TempDir()
			exp, err := gen.WriteDump(dir, gen.DumpConfig{Slots: n})
			require.NoError(t, err)
			if i > 0 {
				db = storetest.OpenDialect(t, store.DialectOf(db)) // a fresh one
			}
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			done := make(chan struct{})
			sampled := make(chan uint64)
			go func() {
				var top uint64
				var m runtime.MemStats
				for {
					runtime.ReadMemStats(&m)
					top = max(top, m.HeapAlloc)
					select {
					case <-done:
						sampled <- top
						return
					case <-time.After(5 * time.Millisecond):
					}
				}
			}()
			sum, err := forensics.Load(ctx, db, dir, loadTime)
			close(done)
			top := <-sampled
			require.NoError(t, err)
			require.Equal(t, exp.Slots, sum.Slots)
			require.Equal(t, exp.Tasks, sum.Tasks)
			var rows int
			for _, c := range sum.Placeholders {
				rows += c
			}
			require.Equal(t, exp.Rows, rows)
			peak[n] = top - min(top, base.HeapAlloc)
		}
		t.Logf("peak Go heap while loading: %.1f MiB for 5,000 slots, %.1f MiB for 100,000", mib(peak[5_000]), mib(peak[100_000]))
		require.Less(t, mib(peak[100_000]), mib(peak[5_000])+16, "the load's Go heap grows with the dump")
	})
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// TestLoadRefusesABigConflictCompactly: loading a dump of 20,000 slots
// twice names the taken ids by their spans, and the refusal stays short.
func TestLoadRefusesABigConflictCompactly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	_, err := gen.WriteDump(dir, gen.DumpConfig{Slots: 20_000})
	require.NoError(t, err)
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		_, err = forensics.Load(ctx, db, dir, loadTime)
		require.NoError(t, err)
		_, err = forensics.Load(ctx, db, dir, loadTime)
		var conflict *forensics.ConflictError
		require.ErrorAs(t, err, &conflict)
		require.Equal(t, int64(20_000), conflict.SlotIDs.N)
		require.Equal(t, 20_000, conflict.Slots.N)
		require.Equal(t, int64(17_001), conflict.Rows["companies"].N+conflict.Rows["contacts"].N+conflict.Rows["deals"].N+
			conflict.Rows["notes"].N+conflict.Rows["activities"].N+conflict.Rows["emails"].N)
		require.Contains(t, err.Error(), "runs 1–4; tasks 1–24; the slots globex/hubspot contact con-1, globex/hubspot deal dea-2")
		require.Contains(t, err.Error(), "(and 19992 more); slot ids 1–20000; the target rows companies 1–2667, contacts 1–3001, deals 1–2667, notes 1–3000, activities 1–2666, emails 1–3000")
		require.Less(t, len(err.Error()), 1000)
	})
}

// TestLoadAdvancesTheIDAllocators: what must hold on every dialect (issue
// 12 item 4): a load moves each table's id allocator past every id it
// loads — the dump's slot ids, its record ids and the placeholder rows it
// numbers — and never back, even where the table gave out higher ids
// whose rows are gone.
func TestLoadAdvancesTheIDAllocators(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		_, err := db.Exec(`UPDATE id_allocators SET next = 900 WHERE name = 'contacts'`)
		require.NoError(t, err)
		_, err = forensics.Load(context.Background(), db, filepath.Join(dumps, "poisoned-ledger"), loadTime)
		require.NoError(t, err)
		tables := map[string]string{"company": "companies", "contact": "contacts", "deal": "deals", "note": "notes",
			"activity": "activities", "email": "emails"}
		for kind, table := range tables {
			var next, maxRow, maxNamed int64
			require.NoError(t, db.QueryRow(`SELECT next FROM id_allocators WHERE name = ?`, table).Scan(&next))
			require.NoError(t, db.QueryRow(`SELECT coalesce(max(id), 0) FROM `+table).Scan(&maxRow))
			require.NoError(t, db.QueryRow(`SELECT coalesce(max(record_id), 0) FROM migration_records WHERE kind = ?`, kind).Scan(&maxNamed))
			require.Greater(t, next, maxRow, "%s: past every row the load wrote", table)
			require.Greater(t, next, maxNamed, "%s: past every row a slot names", table)
		}
		var contacts int64
		require.NoError(t, db.QueryRow(`SELECT next FROM id_allocators WHERE name = 'contacts'`).Scan(&contacts))
		require.GreaterOrEqual(t, contacts, int64(900), "an allocator never moves back")
		var next, maxSlot int64
		require.NoError(t, db.QueryRow(`SELECT next FROM id_allocators WHERE name = 'migration_records'`).Scan(&next))
		require.NoError(t, db.QueryRow(`SELECT max(id) FROM migration_records`).Scan(&maxSlot))
		require.Greater(t, next, maxSlot, "slots: past every slot the load wrote")
	})
}
