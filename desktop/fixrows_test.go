package desktop

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/failpoint"
	"crmimport/forensics"
	"crmimport/importer"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
	"crmimport/store/storetest"
)

// post sends a change as the page does: the cookie, X-Requested-By and a
// JSON body.
func (s *Server) post(t *testing.T, path string, body any) *httptest.ResponseRecorder {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(b)))
	r.Host = s.addr
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(RequestedBy, "crmimport")
	r.AddCookie(&http.Cookie{Name: s.cookie, Value: s.token})
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return w
}

// failureIDs are run's failed records of kind by source id.
func failureIDs(t *testing.T, s *Server, run int64, kind string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	require.NoError(t, report.EachFailure(context.Background(), s.ro, run, func(f report.Failure) error {
		if kind == "" || f.Kind == kind {
			out[f.SourceID] = f.ID
		}
		return nil
	}))
	return out
}

type fixAnswer struct {
	Run      int64  `json:"run"`
	Folder   string `json:"folder"`
	URL      string `json:"url"`
	Outcomes string `json:"outcomes"`
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
	LiveRun  int64  `json:"live_run"`
}

func decode[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &v), w.Body.String())
	return v
}

// outcomesUntilDone polls GET fix-outcomes as the page does, until the
// run has ended, and returns every answer.
func outcomesUntilDone(t *testing.T, s *Server, url string) []fixOutcomes {
	t.Helper()
	var seen []fixOutcomes
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		w := s.do(t, req{http.MethodGet, url, s.addr, nil, true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		o := decode[fixOutcomes](t, w)
		seen = append(seen, o)
		if o.Done {
			return seen
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("run never ended: %+v", seen[len(seen)-1])
	return nil
}

// slots is every slot of the ledger but those of source id except, one
// line each: kind, source id, action, reason, run and row.
func slots(t *testing.T, db *sql.DB, except string) string {
	t.Helper()
	rows, err := db.Query(`SELECT kind, source_id, action, coalesce(reason, ''), coalesce(migration_id, 0), coalesce(record_id, 0)
		FROM migration_records WHERE source_id <> ? ORDER BY kind, source_id`, except)
	require.NoError(t, err)
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var kind, id, action, reason string
		var run, row int64
		require.NoError(t, rows.Scan(&kind, &id, &action, &reason, &run, &row))
		fmt.Fprintf(&b, "%s %s %s %q %d %d\n", kind, id, action, reason, run, row)
	}
	require.NoError(t, rows.Err())
	return b.String()
}

// TestFixRowsReimport: the edited rows of contacts.csv (SPEC §9, Failed
// records) are written as a fix folder in a private folder beside the
// database (0700, its files 0600; a folder made looser before is made
// 0700) and imported by a run of the failed run's tenant, source and
// profile, --only contacts, in the server's process; the outcomes say,
// while it works and once it ends, what became of each row: the contact
// whose email was fixed is imported, the one still wrong fails again with
// its reason, a repeat of an imported id is unchanged. Nothing already
// imported is touched (R2): every other slot is as it was.
func TestFixRowsReimport(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		s := testServer(t, addr)
		// A server whose runs pause in their first contacts batch, so that the
		// outcomes are seen while the run works.
		require.NoError(t, s.Shutdown(ctx))
		fp, err := failpoint.Parse("batch:contact:1=sleep:700ms", canon.ParseKind)
		require.NoError(t, err)
		s, err = New(ctx, Config{DBPath: s.cfg.DBPath, Folder: s.cfg.Folder, Engine: func(db *sql.DB) *phases.Engine { return phases.New(db, fp) }})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
		require.NoError(t, os.Mkdir(private(s, fixesFolder), 0o755))

		ids := failureIDs(t, s, 1, "contact")
		before := slots(t, s.ro, "con-022")
		var contacts int
		require.NoError(t, s.ro.QueryRow(`SELECT count(*) FROM contacts`).Scan(&contacts))
		w := s.post(t, "/api/runs/1/fix", map[string]any{"file": "contacts.csv", "rows": []map[string]any{
			{"failure": ids["con-022"], "cells": []map[string]string{{"name": "email", "value": "dana.whitfield@northgate-dental.example.com"}}},
			{"failure": ids["con-077"], "cells": []map[string]string{{"name": "title", "value": "<script>alert(1)</script>"}}},
			{"failure": ids["con-015"], "cells": []map[string]string{}},
		}})
		require.Equal(t, http.StatusAccepted, w.Code, w.Body.String())
		a := decode[fixAnswer](t, w)
		require.Equal(t, int64(2), a.Run)
		require.Equal(t, "/runs/2", a.URL)
		require.Equal(t, "/api/runs/2/fix-outcomes", a.Outcomes)
		require.Equal(t, private(s, fixesFolder), filepath.Dir(a.Folder), "beside the database")
		for _, p := range []string{private(s, fixesFolder), a.Folder} {
			st, err := os.Stat(p)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o700), st.Mode().Perm(), p)
		}
		entries, err := os.ReadDir(a.Folder)
		require.NoError(t, err)
		require.Len(t, entries, 3, "contacts.csv, reasons.csv and the manifest")
		for _, e := range entries {
			st, err := os.Stat(filepath.Join(a.Folder, e.Name()))
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), e.Name())
		}

		seen := outcomesUntilDone(t, s, a.Outcomes)
		first := seen[0]
		require.False(t, first.Done, "the run pauses in its first batch: the page sees it work")
		require.Equal(t, "running", first.Status)
		for _, o := range first.Outcomes {
			want := "pending" // the run has not read it yet
			if o.SourceID == "con-015" {
				want = "unchanged" // run 1's final slot holds it already (R2)
			}
			require.Equal(t, want, o.Outcome, "%+v", o)
		}
		last := seen[len(seen)-1]
		require.Equal(t, int64(1), last.FromRun)
		require.Equal(t, a.Folder, last.Folder)
		require.Equal(t, "partial", last.Status)
		got := map[string]string{}
		for _, o := range last.Outcomes {
			got[o.SourceID] = o.Outcome + " " + o.Action + " " + o.Reason
			require.Equal(t, ids[o.SourceID], o.Failure, "each outcome names the failure the page edited")
		}
		require.Equal(t, map[string]string{
			"con-022": "imported created ",
			"con-077": `failed  email "Tom Baker <tom.baker@meadowlark-music.example.org>" is not an email address`,
			"con-015": "unchanged created ",
		}, got)

		run, err := phases.LoadRun(ctx, s.ro, 2)
		require.NoError(t, err)
		opts, err := runopts.Decode(run)
		require.NoError(t, err)
		require.Equal(t, "demo", run.Tenant)
		require.Equal(t, "canonical", run.Source)
		require.Equal(t, "canonical", opts.Profile)
		require.Equal(t, []string{"contact"}, opts.Only)
		require.Equal(t, a.Folder, opts.Input)
		var email string
		require.NoError(t, s.ro.QueryRow(`SELECT c.email FROM contacts c JOIN migration_records r
		ON r.record_type = 'contacts' AND r.record_id = c.id WHERE r.source_id = 'con-022'`).Scan(&email))
		require.Equal(t, "dana.whitfield@northgate-dental.example.com", email)
		require.Equal(t, before, slots(t, s.ro, "con-022"), "every other slot is as it was (R2)")
		var after int
		require.NoError(t, s.ro.QueryRow(`SELECT count(*) FROM contacts`).Scan(&after))
		require.Equal(t, contacts+1, after)
	})
}

// TestFixRowsRefusals: a request the page should not send is a 400 with
// the message (no row, no file, a failure of another run or another file,
// twice the same, a cell that is no column of the file), and writes no
// folder; a tenant with a live run answers 409 with the run (R13), and
// the folder written for it is taken back; the outcomes of a run that read
// no fix folder are a 404.
func TestFixRowsRefusals(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		s := testServer(t, addr)
		contacts, deals := failureIDs(t, s, 1, "contact"), failureIDs(t, s, 1, "deal")
		email := []map[string]string{{"name": "email", "value": "dana.whitfield@northgate-dental.example.com"}}
		for name, tt := range map[string]struct {
			body any
			want string
		}{
			"NoFile":      {map[string]any{"rows": []map[string]any{{"failure": contacts["con-022"]}}}, "file is empty"},
			"NoRows":      {map[string]any{"file": "contacts.csv", "rows": []any{}}, "rows is empty"},
			"NotAFailure": {map[string]any{"file": "contacts.csv", "rows": []map[string]any{{"failure": 99999}}}, "failure 99999 is not a failed record of run 1"},
			"OtherFile": {map[string]any{"file": "contacts.csv", "rows": []map[string]any{{"failure": deals["dl-009"]}}},
				"is a row of deals.csv, not of contacts.csv"},
			"Twice": {map[string]any{"file": "contacts.csv", "rows": []map[string]any{{"failure": contacts["con-022"], "cells": email},
				{"failure": contacts["con-022"]}}}, "is in the request twice"},
			"NoSuchColumn": {map[string]any{"file": "contacts.csv", "rows": []map[string]any{{"failure": contacts["con-022"],
				"cells": []map[string]string{{"name": "nickname", "value": "D"}}}}}, `contacts.csv has no column "nickname"`},
			"UnknownField": {map[string]any{"file": "contacts.csv", "rows": []any{}, "dry_run": true}, "not the JSON this route takes"},
		} {
			w := s.post(t, "/api/runs/1/fix", tt.body)
			require.Equal(t, http.StatusBadRequest, w.Code, "%s: %s", name, w.Body.String())
			a := decode[fixAnswer](t, w)
			require.Contains(t, a.Error, tt.want, name)
			require.Equal(t, 2, a.ExitCode, name)
		}
		w := s.post(t, "/api/runs/9/fix", map[string]any{"file": "contacts.csv", "rows": []map[string]any{{"failure": 1}}})
		require.Equal(t, http.StatusNotFound, w.Code, w.Body.String())
		left, _ := filepath.Glob(private(s, fixesFolder) + "/*")
		require.Empty(t, left, "a refused request leaves no folder")

		live, err := importer.New(s.eng).Plan(ctx, importer.RunSpec{Tenant: "demo", Source: "canonical", Input: "../fixtures/demo",
			Only: []ledger.Kind{ledger.Company}, BatchSize: 50})
		require.NoError(t, err)
		w = s.post(t, "/api/runs/1/fix", map[string]any{"file": "contacts.csv", "rows": []map[string]any{{"failure": contacts["con-022"], "cells": email}}})
		require.Equal(t, http.StatusConflict, w.Code, w.Body.String())
		a := decode[fixAnswer](t, w)
		require.Equal(t, 6, a.ExitCode)
		require.Equal(t, live.ID, a.LiveRun)
		left, _ = filepath.Glob(private(s, fixesFolder) + "/*")
		require.Empty(t, left, "the folder of a refused run is taken back")
		var runs int
		require.NoError(t, s.ro.QueryRow(`SELECT count(*) FROM migrations`).Scan(&runs))
		require.Equal(t, 2, runs, "a refused run leaves no row")

		w = s.do(t, req{http.MethodGet, "/api/runs/1/fix-outcomes", s.addr, nil, true})
		require.Equal(t, http.StatusNotFound, w.Code, w.Body.String())
		require.Contains(t, w.Body.String(), "run 1 did not read a fix folder")
		w = s.do(t, req{http.MethodGet, "/api/runs/42/fix-outcomes", s.addr, nil, true})
		require.Equal(t, http.StatusNotFound, w.Code, w.Body.String())
	})
}

// TestFailedPageCellsAreInputs: every cell of a failed row as read is an
// input holding the value, escaped (a cell may hold <script>); the row
// names its failure and file for the page's script; a row that could not
// be read as a row shows its text, not inputs.
func TestFailedPageCellsAreInputs(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		db, err := store.Open(ctx, addr)
		require.NoError(t, err)
		imp := importer.New(phases.New(db, nil))
		in := writeFiles(t, map[string]string{"contacts.csv": "id,first_name,email\n" +
			"c-1,<script>alert(1)</script>,not an email\n" +
			"c-2,\"Ann \"\"Quoted\"\" \" x,ann@example.com\n"})
		run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "canonical", Input: in, BatchSize: 10})
		require.NoError(t, err)
		_, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)
		require.NoError(t, db.Close())
		s, err := New(ctx, Config{DBPath: addr, Folder: t.TempDir()})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })

		w := s.do(t, req{http.MethodGet, "/runs/1/failed", s.addr, nil, true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		body := w.Body.String()
		ids := failureIDs(t, s, 1, "")
		require.Contains(t, body, `<tr data-failure="`+strconv.FormatInt(ids["c-1"], 10)+`" data-file="contacts.csv" data-kind="contact">`)
		require.Contains(t, body, `data-cell="first_name" aria-label="first_name of contact c-1 (line 2)">&lt;script&gt;alert(1)&lt;/script&gt;</textarea>`)
		require.NotContains(t, body, "<script>alert(1)", "export data is escaped")
		require.Contains(t, body, `data-cell="email" aria-label="email of contact c-1 (line 2)">not an email</textarea>`)
		require.Contains(t, body, `<span class="unreadable">c-2,`, "a row not read as a row: its text")
		require.Equal(t, 3, strings.Count(body, "<textarea"), "only the readable row's cells are inputs: id, first_name, email")
		require.Contains(t, body, `<button type="button" class="primary" id="fix-reimport" disabled aria-describedby="fix-why">Re-import fixed rows</button>`)
		require.Contains(t, body, `<span class="why" id="fix-why">Nothing to re-import yet: correct a value in the table below first.</span>`, "why it is disabled, in words")
		require.Contains(t, body, `<script src="/static/fix.js" defer></script>`)
		w = s.do(t, req{http.MethodGet, "/static/fix.js", s.addr, nil, true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		require.Contains(t, w.Header().Get("Content-Type"), "javascript")
		require.NotContains(t, w.Body.String(), "innerHTML", "data is set as text")
	})
}

// TestFixRowsCustomProfile: the run over the fixed rows maps them with the
// profile the failed run kept (Options.ProfileText), even when the profile
// file is gone since: its text is written beside the fix folders, 0600.
func TestFixRowsCustomProfile(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		dir := t.TempDir()
		prof := filepath.Join(dir, "zoho.yaml")
		require.NoError(t, os.WriteFile(prof, []byte("name: zoho\nkinds:\n  contact:\n    files: [\"Contacts_*.csv\"]\n"+
			"    fields:\n      id: Record Id\n      first_name: First Name\n      email: Email\n"), 0o600))
		in := writeFiles(t, map[string]string{"Contacts_2024.csv": "Record Id,First Name,Email\n" +
			"z-1,Hannah,hannah.okafor@example.com\nz-2,Grace,grace(at)example.com\n"})
		db, err := store.Open(ctx, addr)
		require.NoError(t, err)
		imp := importer.New(phases.New(db, nil))
		run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "acme", Source: "zoho", Profile: prof, Input: in, BatchSize: 10})
		require.NoError(t, err)
		_, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)
		require.NoError(t, db.Close())
		require.NoError(t, os.Remove(prof))
		s, err := New(ctx, Config{DBPath: addr, Folder: t.TempDir()})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })

		ids := failureIDs(t, s, 1, "contact")
		require.Len(t, ids, 1)
		w := s.post(t, "/api/runs/1/fix", map[string]any{"file": "Contacts_2024.csv", "rows": []map[string]any{
			{"failure": ids["z-2"], "cells": []map[string]string{{"name": "Email", "value": "grace@example.com"}}}}})
		require.Equal(t, http.StatusAccepted, w.Code, w.Body.String())
		a := decode[fixAnswer](t, w)
		seen := outcomesUntilDone(t, s, a.Outcomes)
		last := seen[len(seen)-1]
		require.Len(t, last.Outcomes, 1)
		require.Equal(t, "imported", last.Outcomes[0].Outcome, "%+v", last)
		fix, err := phases.LoadRun(ctx, s.ro, a.Run)
		require.NoError(t, err)
		opts, err := runopts.Decode(fix)
		require.NoError(t, err)
		require.Equal(t, "zoho", opts.Profile)
		require.Equal(t, private(s, fixesFolder), filepath.Dir(opts.ProfileFile), "the kept profile, beside the fix folders")
		st, err := os.Stat(opts.ProfileFile)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	})
}

// TestFixRowsOfALineTwoKindsFailed: a file that feeds two kinds (SPEC §4:
// an Odoo lead export gives contacts and notes) whose line both failed is
// one row of the fix folder; the edits of either failure are its edits,
// and the run over it reads it --only as those kinds: the lead's contact
// and its note both import, and the outcome of each row is its own kind's.
func TestFixRowsOfALineTwoKindsFailed(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		ctx := context.Background()
		db, err := store.Open(ctx, addr)
		require.NoError(t, err)
		imp := importer.New(phases.New(db, nil))
		run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "odoo", Source: "odoo", Profile: "../fixtures/odoo/crm-lead.yaml",
			Input: "../fixtures/odoo/crm-lead"})
		require.NoError(t, err)
		_, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)
		require.NoError(t, db.Close())
		s, err := New(ctx, Config{DBPath: addr, Folder: t.TempDir()})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })

		const lead16, lead17 = "__export__.crm_lead_16_71b0f4c2", "__export__.crm_lead_17_d09a3b55"
		contacts, notes := failureIDs(t, s, run.ID, "contact"), failureIDs(t, s, run.ID, "note")
		require.Contains(t, notes, lead17)
		w := s.post(t, fmt.Sprintf("/api/runs/%d/fix", run.ID), map[string]any{"file": "crm.lead.csv", "rows": []map[string]any{
			{"failure": contacts[lead16], "cells": []map[string]string{{"name": "email_from", "value": "sara.ek@ek-advokat.example.com"}}},
			{"failure": contacts[lead17], "cells": []map[string]string{}},
			{"failure": notes[lead17], "cells": []map[string]string{{"name": "create_date", "value": "2024-02-28 09:00:00"}}},
		}})
		require.Equal(t, http.StatusAccepted, w.Code, w.Body.String())
		a := decode[fixAnswer](t, w)
		seen := outcomesUntilDone(t, s, a.Outcomes)
		last := seen[len(seen)-1]
		require.Equal(t, "succeeded", last.Status)
		got := map[string]string{}
		for _, o := range last.Outcomes {
			got[o.SourceID] = fmt.Sprintf("%d %s %s", o.Line, o.Outcome, o.Action)
		}
		require.Equal(t, map[string]string{lead16: "2 imported created", lead17: "3 imported created"}, got, "each line once")

		fix, err := phases.LoadRun(ctx, s.ro, a.Run)
		require.NoError(t, err)
		opts, err := runopts.Decode(fix)
		require.NoError(t, err)
		require.Equal(t, []string{"contact", "note"}, opts.Only)
		var linked string
		require.NoError(t, s.ro.QueryRow(`SELECT c.email FROM notes n JOIN contacts c ON c.id = n.contact_id
		JOIN migration_records r ON r.record_type = 'notes' AND r.record_id = n.id WHERE r.source_id = ?`, lead16).Scan(&linked))
		require.Equal(t, "sara.ek@ek-advokat.example.com", linked, "the note waited for its contact, which the fix imported")
		var n int
		require.NoError(t, s.ro.QueryRow(`SELECT count(*) FROM migration_records WHERE source_id = ? AND action = 'created' AND migration_id = ?`,
			lead17, a.Run).Scan(&n))
		require.Equal(t, 2, n, "the lead's contact and its note")
	})
}

// TestDoctorAfterFixRows (issue 23 item 13): after the page re-imports a
// fixed row, the Ledger page's doctor (GET /api/doctor) tells the truth:
// the fix run read one row of contacts.csv, so run 1's skipped contacts
// are still the latest attempt at their records, not stale skips (R3), and
// there is no poisoned ledger; the note that waited for the contact fixed
// now is ready to take over, and nothing else is found.
func TestDoctorAfterFixRows(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := testServer(t, addr)
		doctor := func() forensics.Diagnosis {
			w := s.do(t, req{http.MethodGet, "/api/doctor", s.addr, nil, true})
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			return decode[forensics.Diagnosis](t, w)
		}
		require.True(t, doctor().Clean)
		ids := failureIDs(t, s, 1, "contact")
		w := s.post(t, "/api/runs/1/fix", map[string]any{"file": "contacts.csv", "rows": []map[string]any{
			{"failure": ids["con-022"], "cells": []map[string]string{{"name": "email", "value": "dana.whitfield@northgate-dental.example.com"}}},
		}})
		require.Equal(t, http.StatusAccepted, w.Code, w.Body.String())
		seen := outcomesUntilDone(t, s, decode[fixAnswer](t, w).Outcomes)
		last := seen[len(seen)-1]
		require.Equal(t, "succeeded", last.Status)
		require.Equal(t, "imported", last.Outcomes[0].Outcome, "%+v", last.Outcomes)

		d := doctor()
		require.Equal(t, []string{forensics.ReadyToTakeOver}, d.Names(), "%+v", d.Findings)
		require.Equal(t, []string{"note nt-019"}, d.Findings[0].Examples, "the note that waited for con-022")
		require.Empty(t, d.Incidents)
	})
}
