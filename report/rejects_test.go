package report_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store/storetest"
)

// TestRejectsWritesFailedRecordsSafely: a run's failed records as CSV —
// run, kind, source_id, file, line, reason, then the raw columns of every
// file in the order first seen — with every cell a spreadsheet would run
// as a formula written as text.
func TestRejectsWritesFailedRecordsSafely(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
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
		n, err := report.Rejects(ctx, db, run.ID, &b)
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
		n, err = report.Rejects(ctx, db, run2.ID, &b)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Equal(t, "run,kind,source_id,file,line,reason\n", b.String())

		_, err = report.Rejects(ctx, db, 99, &b)
		require.ErrorIs(t, err, phases.ErrNoRun)
	})
}

// TestRejectsNeutralisesEveryFormulaStarter: OWASP's advice for CSV
// injection, one failed record per starter — =, +, -, @, tab, carriage
// return, | and %, their full-width forms, and each of them after the
// blanks a spreadsheet skips (a space, a no-break space, an ideographic
// space, a zero-width space) — in a raw column, the source id and the
// header: each cell comes out with a leading ', and a cell that only looks
// close (a = inside, a leading space before text) comes out as it is.
func TestRejectsNeutralisesEveryFormulaStarter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		imp := importer.New(phases.New(db, nil))
		dangerous := []string{
			"=cmd|' /C calc'!A0", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1", "\r=1",
			"|calc", "%0A=1",
			"\uff1d1+2", "\uff0b1+2", "\uff0d1+2", "\uff20SUM(1)", "\uff5ccalc", "\uff05x",
			" =1+2", "\u00a0=1+2", "\u3000\uff1d1+2", "\u200b@SUM(1)", "  \u00a0+1", " \t-1",
		}
		harmless := []string{"Acme", "a=b", " Acme", "50%", "x|y", "'quoted"}
		var lines []string
		for i, v := range append(append([]string(nil), dangerous...), harmless...) {
			// Every record fails (its email is no address), keeping its raw
			// title; the first few carry the starter in the id too.
			id := fmt.Sprintf("c-%02d", i)
			if i < 3 {
				id = v[:1] + id
			}
			rec := map[string]string{"id": id, "first_name": "Ann", "email": "not-an-address", "title": v}
			if i == 0 {
				rec["\u00a0=HYPERLINK(1)"] = "x" // an unmapped column: in the header
			}
			b, err := json.Marshal(rec)
			require.NoError(t, err)
			lines = append(lines, string(b))
		}
		export := writeDump(t, map[string]string{"contacts.jsonl": strings.Join(lines, "\n") + "\n"})
		run, err := imp.Plan(ctx, importer.RunSpec{Tenant: "t", Source: "canonical", Input: export})
		require.NoError(t, err)
		_, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)

		var b bytes.Buffer
		n, err := report.Rejects(ctx, db, run.ID, &b)
		require.NoError(t, err)
		require.Equal(t, len(dangerous)+len(harmless), n)
		recs, err := csv.NewReader(&b).ReadAll()
		require.NoError(t, err, b.String())
		title := -1
		for i, h := range recs[0] {
			if h == "title" {
				title = i
			}
		}
		require.Positive(t, title, "the raw title column: %q", recs[0])
		require.Contains(t, recs[0], "'\u00a0=HYPERLINK(1)", "a header cell is neutralised too")
		for i, v := range dangerous {
			t.Run(fmt.Sprintf("%q", v), func(t *testing.T) {
				require.Equal(t, "'"+v, recs[1+i][title], "a cell starting %q is neutralised", v)
				if i < 3 {
					require.Equal(t, "'"+v[:1]+fmt.Sprintf("c-%02d", i), recs[1+i][2], "the source id too")
				}
			})
		}
		for i, v := range harmless {
			require.Equal(t, v, recs[1+len(dangerous)+i][title], "%q is written as it is", v)
		}
	})
}
