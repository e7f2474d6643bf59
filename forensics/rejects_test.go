package forensics_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/forensics"
	"crmimport/importer"
	"crmimport/phases"
)

// TestRejectsWritesFailedRecordsSafely: a run's failed records as CSV —
// run, kind, source_id, file, line, reason, then the raw columns of every
// file in the order first seen — with every cell a spreadsheet would run
// as a formula written as text.
func TestRejectsWritesFailedRecordsSafely(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openDB(t)
	imp := importer.New(phases.New(db, nil))
	export := writeDump(t, map[string]string{
		"contacts.csv": "id,first_name,email,phone\n" +
			"c-1,Ann,ann@ok.example,\n" +
			"c-2,\"=HYPERLINK(\"\"http://evil.example\"\",\"\"click\"\")\",not-an-address,+1 555 0100\n" +
			"c-3,Bob,@bob,\"\tx\"\n",
		"deals.csv": "id,name,amount\nd-1,Big deal,-12abc\n=d-2,,5\n",
	})
	run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "t", Source: "canonical", Input: export})
	require.NoError(t, err)
	_, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)

	var b bytes.Buffer
	n, err := forensics.Rejects(ctx, db, run.ID, &b)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	recs, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err, b.String())
	require.Equal(t, []string{"run", "kind", "source_id", "file", "line", "reason", "id", "first_name", "email", "phone", "name", "amount"}, recs[0])
	require.Len(t, recs, 5)
	reasons := make([]string, 0, 4)
	for _, r := range recs[1:] {
		reasons = append(reasons, r[5])
		r[5] = "…"
	}
	require.Equal(t, [][]string{
		{"1", "contact", "c-2", "contacts.csv", "3", "…", "c-2", `'=HYPERLINK("http://evil.example","click")`, "not-an-address", "'+1 555 0100", "", ""},
		{"1", "contact", "c-3", "contacts.csv", "4", "…", "c-3", "Bob", "'@bob", "'\tx", "", ""},
		{"1", "deal", "d-1", "deals.csv", "2", "…", "d-1", "", "", "", "Big deal", "'-12abc"},
		{"1", "deal", "'=d-2", "deals.csv", "3", "…", "'=d-2", "", "", "", "", "5"},
	}, recs[1:])
	require.Contains(t, reasons[0], "not-an-address")
	require.Contains(t, reasons[2], "-12abc")
	for _, r := range reasons {
		require.NotContains(t, "=+-@\t\r", r[:1], "a reason is neutralised too")
	}

	// A run without failures: the header alone.
	clean := writeDump(t, map[string]string{"companies.csv": "id,name\nco-1,Acme\n"})
	run2, err := imp.Plan(ctx, importer.RunSpec{Tenant: "u", Source: "canonical", Input: clean})
	require.NoError(t, err)
	_, err = imp.Execute(ctx, run2.ID)
	require.NoError(t, err)
	b.Reset()
	n, err = forensics.Rejects(ctx, db, run2.ID, &b)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, "run,kind,source_id,file,line,reason\n", b.String())

	_, err = forensics.Rejects(ctx, db, 99, &b)
	require.ErrorIs(t, err, phases.ErrNoRun)
}
