package importer

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/profile"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
)

// A revisit looks up the final slots of the ids it reads again, and loads
// no kind's slots whole: it ends as --reread does when a skipped note's
// parent was imported in this very run (contacts.csv fixed, read whole),
// and for a duplicate of an imported id (n1, c1).
func TestRevisitLooksUpOnlyItsIDs(t *testing.T) {
	t.Parallel()
	dir := withDefects(t)
	w := newTwins(t)
	w.both(dir)
	p := filepath.Join(dir, "contacts.csv")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), "c4,Di,Ragged\r\n", "c4,Di,Ragged,di@acme.test,co1\r\n", 1)), 0o600))
	got := w.rerun(dir, "")
	require.Equal(t, map[string]bool{"companies.csv": true, "notes.csv": true}, got)
	var action string
	require.NoError(t, w.revisit.QueryRow(`SELECT action FROM migration_records WHERE kind = 'note' AND source_id = 'n6'`).Scan(&action))
	require.Equal(t, "created", action, "the note on the contact fixed in this run is created")
	runs, err := phases.ListRuns(context.Background(), w.revisit, "acme")
	require.NoError(t, err)
	x := w.last.runs[runs[0].ID]
	require.NotNil(t, x)
	require.NotContains(t, x.finals, ledger.Note, "the notes' final slots are looked up, not loaded")
}

// decideBoth decides the records of the file of kind k in a planned run
// twice, in one transaction: with the kinds' slots and keys loaded
// whole, as a full reading does, and with the slots looked up by id, as a
// revisit does (with its chunk prefetched, or each id asked for alone).
// Each decision must be the same.
func decideBoth(t *testing.T, imp *Importer, run phases.Run, k ledger.Kind, prefetch bool) []decision {
	t.Helper()
	ctx := context.Background()
	opts, err := runopts.Decode(run)
	require.NoError(t, err)
	prof, err := RunProfile(opts)
	require.NoError(t, err)
	tasks, err := phases.LoadTasks(ctx, imp.Engine.DB, run.ID)
	require.NoError(t, err)
	var task phases.Task
	for _, u := range tasks {
		if u.Kind == k {
			task = u
		}
	}
	w, err := imp.openFile(prof, task, tasks)
	require.NoError(t, err)
	defer w.close()
	var recs []profile.Record
	for {
		row, err := w.rr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		r := w.mapper.Map(row)
		w.mapper.Complete(&r)
		recs = append(recs, r)
	}
	tx, err := imp.Engine.DB.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	full := newStage(newRunIndex("acme", "canonical"), k)
	look := newStage(newRunIndex("acme", "canonical"), k)
	look.look = newLookups("acme", "canonical", store.DialectOf(imp.Engine.DB))
	if prefetch {
		require.NoError(t, look.look.prefetch(ctx, tx, look, recs))
	}
	var out []decision
	for _, r := range recs {
		var a, b decision
		for _, s := range []struct {
			st *stage
			d  *decision
		}{{full, &a}, {look, &b}} {
			n := int64(1000)
			d, err := decide(ctx, tx, s.st, prof, r, func() int64 { n++; return n })
			require.NoError(t, err)
			s.st.apply(&d)
			*s.d = d
		}
		require.Equal(t, a.outcome, b.outcome, "line %d", r.Line)
		require.Equal(t, a.reason, b.reason, "line %d", r.Line)
		require.Equal(t, a.rowID, b.rowID, "line %d", r.Line)
		require.Equal(t, a.links, b.links, "line %d", r.Line)
		require.Equal(t, a.detail, b.detail, "line %d", r.Line)
		out = append(out, b)
	}
	return out
}

// Looked up by id, a record is decided as with the kinds loaded whole:
// already there (R2), matched by email to the oldest contact (R5), linked
// through final slots only (R6), skipped for want of one, a duplicate.
func TestLookupsDecideAsTheLoadedIndex(t *testing.T) {
	t.Parallel()
	for _, prefetch := range []bool{true, false} {
		name := "EachIDAlone"
		if prefetch {
			name = "Prefetched"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T, db *sql.DB) {
				imp := New(phases.New(db, nil))
				importDir(t, imp, export(t, map[string]string{
					"contacts.csv": "id,first_name,email,deleted\nc1,Ann,ann@acme.test,\nc2,Bob,ann@acme.test,\nc3,Cy,cy@acme.test,true\n",
				}), 10)
				dir := export(t, map[string]string{
					"contacts.csv": "id,first_name,email\nc1,Ann,ann@acme.test\nc9,Annie,ANN@acme.test\nc9,Again,x@acme.test\nc10,Dee,dee@acme.test\n",
					"notes.csv":    "id,body,contact_id\nn1,on ann,c1\nn2,on cy,c3\nn3,on nobody,c404\nn1,again,c1\n",
				})
				run, err := imp.Plan(context.Background(), RunSpec{Tenant: "acme", Source: "canonical", Input: dir})
				require.NoError(t, err)
				cs := decideBoth(t, imp, run, ledger.Contact, prefetch)
				require.Equal(t, []outcome{unchanged, matched, failed, created}, []outcome{cs[0].outcome, cs[1].outcome, cs[2].outcome, cs[3].outcome})
				ns := decideBoth(t, imp, run, ledger.Note, prefetch)
				require.Equal(t, []outcome{created, skipped, skipped, failed}, []outcome{ns[0].outcome, ns[1].outcome, ns[2].outcome, ns[3].outcome})
				require.True(t, ns[3].duplicate)
			})
		})
	}
}

// A revisit reads its records where they stand in a file or a zip's
// stored entry, and forward to each in a gzip or a deflated entry: each
// ends as --reread does.
func TestRevisitReadsInPlaceOrForward(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		pack func(t *testing.T, src, dst string) string
	}{
		{"Folder", func(t *testing.T, src, dst string) string { return src }},
		{"StoredZip", func(t *testing.T, src, dst string) string { return packZip(t, src, dst, zip.Store) }},
		{"DeflatedZip", func(t *testing.T, src, dst string) string { return packZip(t, src, dst, zip.Deflate) }},
		{"Gzipped", func(t *testing.T, src, dst string) string {
			for _, name := range []string{"companies.csv", "contacts.csv", "notes.csv"} {
				b, err := os.ReadFile(filepath.Join(src, name))
				require.NoError(t, err)
				var gz bytes.Buffer
				zw := gzip.NewWriter(&gz)
				_, err = zw.Write(b)
				require.NoError(t, err)
				require.NoError(t, zw.Close())
				require.NoError(t, os.WriteFile(filepath.Join(dst, name+".gz"), gz.Bytes(), 0o600))
			}
			return dst
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := tc.pack(t, withDefects(t), t.TempDir())
			w := newTwins(t)
			w.both(in)
			got := w.rerun(in, "")
			require.Len(t, got, 3, "companies, contacts and notes revisited")
		})
	}
}

// packZip zips the files of src, each stored or deflated, into dst.
func packZip(t *testing.T, src, dst string, method uint16) string {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	ents, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		f, err := zw.CreateHeader(&zip.FileHeader{Name: "export/" + e.Name(), Method: method})
		require.NoError(t, err)
		_, err = f.Write(data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	p := filepath.Join(dst, "export.zip")
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o600))
	return p
}
