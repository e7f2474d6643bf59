package importer

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/failpoint"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// macContacts is a contacts file as Excel for Mac writes it: lone-CR line
// ends (one CRLF among them), a quoted line break in CR, Windows-1252
// bytes and no UTF-8, two bad rows, and a totals footer after an empty row.
// mixedContacts is the same with an LF header and a CRLF in the quotes:
// its lone CRs are line ends as well.
var (
	macContacts   = "id,first_name,last_name,email,title,company_id\r" + contactRows("\r")
	mixedContacts = "id,first_name,last_name,email,title,company_id\n" + contactRows("\r\n")
)

func contactRows(quotedBreak string) string {
	return "c1,Ren\xe9,Dupont,rene@example.com,Owner,co1\r" + // line 2
		"c2,Siobhan,O\x92Brien,siobhan@example.com,\"Head of" + quotedBreak + "Sales\",co2\r" + // lines 3-4
		"c3,,,,Receptionist,co1\r" + // line 5: no name nor email
		"c4,Zo\xeb,Bront\xeb,zoe@example.com,Buyer,co2\r\n" + // line 6
		"c5,Ann,Lee,not-an-email,Buyer,co1\r" + // line 7: not an address
		"\r" +
		",Total: 5,,,,\r" // line 9: the footer
}

// TestLoneCRFileResumesAtItsCheckpoint: a lone-CR file read as
// Windows-1252 on the evidence of its bytes, stopped after its first batch,
// resumes at its checkpoint onto the right record (R12): the rows after it
// are decoded as the task was planned (its encoding column), their failures
// carry the lines an uninterrupted run gives, and the footer is told once.
func TestLoneCRFileResumesAtItsCheckpoint(t *testing.T) {
	t.Parallel()
	for name, contacts := range map[string]string{"Mac": macContacts, "Mixed": mixedContacts} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resumeAtCheckpoint(t, contacts)
		})
	}
}

func resumeAtCheckpoint(t *testing.T, contacts string) {
	ctx := context.Background()
	dir := export(t, map[string]string{"companies.csv": "id,name\nco1,Acme\nco2,Globex\n", "contacts.csv": contacts})

	whole := storetest.OpenDB(t)
	importDir(t, New(phases.New(whole, nil)), dir, 2)

	db := storetest.OpenDB(t)
	fps, err := failpoint.Parse("batch:contact:2=error", canon.ParseKind)
	require.NoError(t, err)
	imp := New(phases.New(db, fps))
	run, err := imp.Plan(ctx, RunSpec{Tenant: "acme", Source: "canonical", Input: dir, BatchSize: 2})
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunPartial, run.Status)
	tasks, err := phases.LoadTasks(ctx, db, run.ID)
	require.NoError(t, err)
	require.Equal(t, "windows-1252", tasks[1].Encoding)
	require.Equal(t, phases.Checkpoint{Rows: 2, Line: 3}, tasks[1].Checkpoint, "c2 starts at line 3")

	imp = New(phases.New(db, nil))
	_, _, err = imp.Resume(ctx, run.ID)
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunPartial, run.Status)
	require.Equal(t, phases.Counts{Imported: 3, Failed: 2}, run.Stats[ledger.Contact])
	tasks, err = phases.LoadTasks(ctx, db, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.Checkpoint{Rows: 5, Line: 7}, tasks[1].Checkpoint)

	for _, q := range []string{
		`SELECT first_name || '|' || last_name || '|' || title FROM contacts ORDER BY id`,
		`SELECT source_id || '|' || file || '|' || line || '|' || reason FROM record_failures ORDER BY line`,
		`SELECT message FROM run_log WHERE message LIKE '%footer%'`,
	} {
		require.Equal(t, column(t, whole, q), column(t, db, q), q)
	}
	require.Equal(t, []string{"René|Dupont|Owner", "Siobhan|O’Brien|Head of\nSales", "Zoë|Brontë|Buyer"},
		column(t, db, `SELECT first_name || '|' || last_name || '|' || title FROM contacts ORDER BY id`))
	require.Equal(t, []string{"c3|contacts.csv|5|contact has neither a name nor an email", `c5|contacts.csv|7|email "not-an-email" is not an email address`},
		column(t, db, `SELECT source_id || '|' || file || '|' || line || '|' || reason FROM record_failures ORDER BY line`))
	require.Equal(t, []string{"contacts.csv: line 9, after the empty row at line 8, hold no id: a footer, not records: 1 line not read (give them ids if they are records)"},
		column(t, db, `SELECT message FROM run_log WHERE message LIKE '%footer%'`))
}

// column is the first column of q's rows, as text.
func column(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestWeighedEncodingResumesAsPlanned: a resumed run reads a file in the
// encoding its planning decided on the whole file's evidence (R10: the
// task keeps it), so a Windows-1252 export whose few UTF-8 pairs would
// read as UTF-8 (issue 23 item 7) is read alike before and after a stop:
// the database equals an uninterrupted run's (R12).
func TestWeighedEncodingResumesAsPlanned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := "../fixtures/bad/salesforce/12-windows-1252-weighed"
	plan := func(imp *Importer) phases.Run {
		run, err := imp.Plan(ctx, RunSpec{Tenant: "acme", Source: "salesforce", Input: dir, BatchSize: 3})
		require.NoError(t, err)
		return run
	}
	whole := storetest.OpenDB(t)
	imp := New(phases.New(whole, nil))
	run, err := imp.Execute(ctx, plan(imp).ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunSucceeded, run.Status)

	db := storetest.OpenDB(t)
	fps, err := failpoint.Parse("batch:company:2=error", canon.ParseKind)
	require.NoError(t, err)
	imp = New(phases.New(db, fps))
	run, err = imp.Execute(ctx, plan(imp).ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunPartial, run.Status, "its first batch of accounts is in")
	tasks, err := phases.LoadTasks(ctx, db, run.ID)
	require.NoError(t, err)
	require.Equal(t, "windows-1252", tasks[0].Encoding)
	require.Equal(t, phases.Checkpoint{Rows: 3, Line: 4}, tasks[0].Checkpoint)

	imp = New(phases.New(db, nil))
	_, _, err = imp.Resume(ctx, run.ID)
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunSucceeded, run.Status)
	for _, q := range []string{
		`SELECT name FROM companies ORDER BY id`,
		`SELECT c.last_name || '|' || co.name FROM contacts c JOIN companies co ON co.id = c.company_id ORDER BY c.id`,
	} {
		require.Equal(t, column(t, whole, q), column(t, db, q), q)
	}
	require.Equal(t, []string{"Café Müller GmbH", "CrÃ©ations Durand SARL", "Brauerei Höß KG", "Ã\u0081guila Consultores",
		"O’Neill Freight Ltd", "Ã\u008dslandia Travel ehf", "Harbor Logistics", "Smørrebrød Catering ApS"},
		column(t, db, `SELECT name FROM companies ORDER BY id`))
}
