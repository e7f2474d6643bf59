package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/charmap"

	"crmimport/fixfile"
	"crmimport/importer"
	"crmimport/importer/fixmanifest"
	"crmimport/importer/reader/readertest"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store/storetest"
)

// resave is how a spreadsheet saves a CSV after a person fixed it: its
// delimiter, line ends and encoding, whatever the file was.
type resave struct {
	comma   rune
	crlf    bool
	cp1252  bool // Windows-1252, as Excel's "CSV" writes; else UTF-8 with a BOM ("CSV UTF-8")
	changed func(row map[string]string)
}

// fixCSV reads a fix file, lets changed fix each row (by column name), and
// writes it back as a spreadsheet would.
func fixCSV(t *testing.T, file string, how resave) {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(b, []byte("\ufeff")), "%s starts with a UTF-8 BOM", file)
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\ufeff")))).ReadAll()
	require.NoError(t, err)
	header := rows[0]
	var out bytes.Buffer
	w := csv.NewWriter(&out)
	w.Comma, w.UseCRLF = how.comma, how.crlf
	require.NoError(t, w.Write(header))
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range header {
			if i < len(r) {
				m[h] = r[i]
			}
		}
		how.changed(m)
		rec := make([]string, len(header))
		for i, h := range header {
			rec[i] = m[h]
		}
		require.NoError(t, w.Write(rec))
	}
	w.Flush()
	data := out.Bytes()
	if how.cp1252 {
		data, err = charmap.Windows1252.NewEncoder().Bytes(data)
		require.NoError(t, err)
	} else {
		data = append([]byte("\ufeff"), data...)
	}
	require.NoError(t, os.WriteFile(file, data, 0o600))
}

// slotsOf is every slot a run owns, with its action, reason and time.
func slotsOf(t *testing.T, db string, run int64) []string {
	return query(t, db, `SELECT kind, source_id, action, coalesce(reason, ''), coalesce(record_id, 0), created_at
		FROM migration_records WHERE migration_id = ? ORDER BY kind, source_id`, run)
}

// failuresOf are a run's failed records: kind, source id and reason.
func failuresOf(t *testing.T, db string, run int64) []string {
	return query(t, db, `SELECT kind, coalesce(source_id, ''), reason FROM record_failures WHERE migration_id = ? ORDER BY kind, source_id, reason`, run)
}

// A run with failed rows → rejects --as-export → the fix files corrected
// the way a spreadsheet re-saves them (; separators, CRLF, Windows-1252 in
// one, a UTF-8 BOM in the other, a long id kept as text, José) → a run
// over the folder: the fixed rows import, the others fail again with the
// same reasons, and nothing the first run imported changes (R2).
func TestFixFolderRoundTrip(t *testing.T) {
	t.Parallel()
	exp := copyDemo(t)
	// Two more failed contacts: a long numeric id (a spreadsheet keeps it
	// as text only when told) and an id a spreadsheet would run as a formula.
	f, err := os.OpenFile(filepath.Join(exp, "contacts.csv"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("900000000000000123456,Long,Id,long.id(at)example.com,,,acc-001,2023-01-01,,\r\n" +
		"=1+2,Formula,Id,formula(at)example.com,,,acc-001,2023-01-01,,\r\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	storetest.RunAddress(t, func(t *testing.T, db string) {
		first := crm(t, nil, "--db", db, "--json", "--quiet", "run", "--tenant", "acme", "--source", "canonical", exp)
		require.Equal(t, exitPartial, first.code, first.stderr)
		run1 := first.summary(t).Run
		slots1 := slotsOf(t, db, run1)
		fails1 := failuresOf(t, db, run1)
		counts := func() []string {
			return query(t, db, `SELECT (SELECT count(*) FROM companies), (SELECT count(*) FROM contacts), (SELECT count(*) FROM deals),
			(SELECT count(*) FROM notes), (SELECT count(*) FROM activities), (SELECT count(*) FROM emails)`)
		}
		counts1 := counts()

		fix := filepath.Join(t.TempDir(), "fix-1")
		r := crm(t, nil, "--db", db, "--json", "rejects", "1", "--out", fix, "--as-export")
		require.Equal(t, 0, r.code, r.stderr)
		var res fixfile.Result
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
		require.Equal(t, fix, res.Dir)
		written := map[string]int{}
		for _, w := range res.Files {
			written[w.Name] = w.Rows
		}
		require.Equal(t, map[string]int{"companies.csv": 1, "contacts.csv": 6, "deals.csv": 3, "notes.csv": 1, "activities.csv": 3, "emails.json": 1}, written)
		require.Equal(t, 15, res.Reasons)
		require.Contains(t, res.Next, "crmimport run --tenant acme --source canonical ")

		// The layout: each file's own header, in its order; private files.
		st, err := os.Stat(fix)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
		entries, err := os.ReadDir(fix)
		require.NoError(t, err)
		require.Len(t, entries, 8)
		for _, e := range entries {
			info, err := e.Info()
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), e.Name())
		}
		firstLine := func(file string) string {
			b, err := os.ReadFile(file)
			require.NoError(t, err)
			line, _, _ := strings.Cut(strings.TrimPrefix(string(b), "\ufeff"), "\n")
			return strings.TrimSuffix(line, "\r")
		}
		for _, name := range []string{"companies.csv", "contacts.csv", "deals.csv", "notes.csv", "activities.csv"} {
			require.Equal(t, firstLine(filepath.Join(exp, name)), firstLine(filepath.Join(fix, name)), "%s keeps its own header", name)
		}
		contacts, err := os.ReadFile(filepath.Join(fix, "contacts.csv"))
		require.NoError(t, err)
		require.Contains(t, string(contacts), "\n=1+2,Formula,", "data cells are as read")
		reasons, err := os.ReadFile(filepath.Join(fix, fixmanifest.ReasonsName))
		require.NoError(t, err)
		require.Contains(t, string(reasons), "contacts.csv,7,'=1+2,", "reasons.csv is formula-safe")
		require.Contains(t, string(reasons), "contacts.csv,2,con-022,")
		man, err := fixmanifest.Read(fix)
		require.NoError(t, err)
		require.Equal(t, run1, man.Run)
		require.Equal(t, "canonical", man.Source)

		// A spreadsheet's corrections.
		fixCSV(t, filepath.Join(fix, "contacts.csv"), resave{comma: ';', crlf: true, cp1252: true, changed: func(row map[string]string) {
			switch row["id"] {
			case "con-022":
				row["email"] = "dana.whitfield@northgate-dental.example.com"
			case "con-031":
				row["first_name"] = "José"
			case "900000000000000123456":
				row["email"] = "long.id@example.com"
			}
		}})
		fixCSV(t, filepath.Join(fix, "deals.csv"), resave{comma: ';', crlf: true, changed: func(row map[string]string) {
			if row["id"] == "dl-009" {
				row["amount"] = "12000.00"
			}
		}})

		second := crm(t, nil, "--db", db, "--json", "run", "--tenant", "acme", "--source", "canonical", fix)
		require.Equal(t, exitPartial, second.code, second.stderr)
		s := second.summary(t)
		require.Equal(t, phases.Counts{Imported: 3, Unchanged: 1, Failed: 2, Outdated: 1}, s.Kinds["contact"],
			"con-015 repeats an imported id with other values: unchanged (R2), outdated (R17: its slot says otherwise)")
		require.Equal(t, phases.Counts{Imported: 1, Failed: 2, Relinked: 1}, s.Kinds["deal"],
			"a deal of run 1 that names a contact fixed here is linked to it now (R6a)")
		for _, k := range []string{"company", "email"} {
			require.Equal(t, phases.Counts{Failed: 1}, s.Kinds[k], k)
		}
		require.Equal(t, phases.Counts{Failed: 1, Relinked: 1}, s.Kinds["note"], "a note of run 1 that names a record fixed here is linked to it now (R6a)")
		require.Equal(t, phases.Counts{Failed: 3}, s.Kinds["activity"])
		require.Contains(t, second.stderr, fix+" is a fix folder of run 1 (tenant acme, source canonical): its crmimport-fix.json and reasons.csv are not rows")
		require.NotContains(t, second.stderr, "ignored", "the manifest and reasons are left out with their reason, not as surprises")

		// Nothing the first run imported changed; the fixed rows are the
		// second run's, created.
		require.Equal(t, slots1, slotsOf(t, db, run1))
		require.Equal(t, []string{
			"contact|900000000000000123456|created", "contact|con-022|created", "contact|con-031|created", "deal|dl-009|created",
		}, query(t, db, `SELECT kind, source_id, action FROM migration_records WHERE migration_id = ? ORDER BY kind, source_id`, s.Run))
		c2 := counts()
		require.NotEqual(t, counts1, c2)
		require.Equal(t, []string{"26|83|36|71|35|17"}, counts1)
		require.Equal(t, []string{"26|86|37|71|35|17"}, c2)
		require.Equal(t, []string{"José"}, query(t, db, `SELECT c.first_name FROM contacts c
		JOIN migration_records r ON r.record_type = 'contacts' AND r.record_id = c.id WHERE r.source_id = 'con-031'`))
		require.Equal(t, []string{"12000.00"}, query(t, db, `SELECT d.amount FROM deals d
		JOIN migration_records r ON r.record_type = 'deals' AND r.record_id = d.id WHERE r.source_id = 'dl-009'`))

		// The rows not fixed fail again with the same reasons.
		fixed := map[string]bool{"contact|con-022": true, "contact|con-031": true, "contact|900000000000000123456": true,
			"deal|dl-009": true, "contact|con-015": true}
		var again []string
		for _, f := range fails1 {
			parts := strings.SplitN(f, "|", 3)
			if !fixed[parts[0]+"|"+parts[1]] {
				again = append(again, f)
			}
		}
		require.Equal(t, again, failuresOf(t, db, s.Run))
	})
}

// demoRun imports a copy of the demo export into a new database: run 1,
// with failed records of every kind.
func demoRun(t *testing.T) (exp, db string) {
	t.Helper()
	exp = copyDemo(t)
	db = filepath.Join(t.TempDir(), "crm.db")
	r := crm(t, nil, "--db", db, "--quiet", "run", "--tenant", "acme", "--source", "canonical", exp)
	require.Equal(t, exitPartial, r.code, r.stderr)
	return exp, db
}

// The refusals of --as-export: a folder that is not empty, a run's input
// folder or a folder inside it (nothing written), and --as-export without
// --out (usage).
func TestFixFolderRefusals(t *testing.T) {
	t.Parallel()
	exp, db := demoRun(t)

	full := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(full, "keep.txt"), []byte("mine"), 0o600))
	inside := filepath.Join(exp, "fixes")
	for _, tt := range []struct {
		name, out, want, next string
	}{
		{"NotEmpty", full, "is not empty (it holds keep.txt)", "name a new or empty folder"},
		{"InputFolder", exp, "is the input folder of run 1", "write the fix folder elsewhere"},
		{"InsideInputFolder", inside, "is inside the input folder of run 1", "write the fix folder elsewhere"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := crm(t, nil, "--db", db, "rejects", "1", "--out", tt.out, "--as-export")
			require.Equal(t, exitError, r.code, r.stderr)
			require.Contains(t, r.stderr, tt.want)
			require.Contains(t, r.stderr, tt.next, "says what to do")
		})
	}
	entries, err := os.ReadDir(full)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing written beside keep.txt")
	_, err = os.Stat(inside)
	require.ErrorIs(t, err, os.ErrNotExist, "no folder made inside the export")
	_, err = os.Stat(filepath.Join(exp, fixmanifest.Name))
	require.ErrorIs(t, err, os.ErrNotExist)

	r := crm(t, nil, "--db", db, "rejects", "1", "--as-export")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "--out DIR")
	r = crm(t, nil, "--db", db, "--json", "rejects", "--as-export", "1")
	require.Equal(t, exitUsage, r.code, "flags before the run id too")
}

// breakSalesforce copies the Salesforce fixture and breaks a deal whose
// contact comes from OpportunityContactRole and an enhanced note whose
// body is a ContentVersion file and whose link is a ContentDocumentLink.
func breakSalesforce(t *testing.T) string {
	t.Helper()
	exp := t.TempDir()
	src := "../../fixtures/salesforce"
	require.NoError(t, os.CopyFS(exp, os.DirFS(src)))
	edit := func(name, from, to string) {
		b, err := os.ReadFile(filepath.Join(exp, name))
		require.NoError(t, err)
		require.Contains(t, string(b), from)
		require.NoError(t, os.WriteFile(filepath.Join(exp, name), []byte(strings.Replace(string(b), from, to, 1)), 0o600))
	}
	edit("Opportunity.csv", `"Fleet tracking","","Closed Won","125000.50"`, `"Fleet tracking","","Closed Won","125 000,50 €"`)
	edit("ContentVersion.csv", `"2024-02-05 09:30:00"`, `"le 5 février"`)
	return exp
}

// A Salesforce fix folder holds none of the side files its rows need: the
// run over it finds them through the manifest and says so; the deal gets
// its contact from OpportunityContactRole, the note its body and its
// contact. A side file that changed since, or is gone, is refused before
// any run exists (R10), naming the file and what to do.
func TestFixFolderSideFiles(t *testing.T) {
	t.Parallel()
	exp := breakSalesforce(t)
	db := filepath.Join(t.TempDir(), "crm.db")
	sf := func(more ...string) result {
		return crm(t, nil, append([]string{"--db", db, "--json", "run", "--tenant", "acme", "--source", "salesforce"}, more...)...)
	}
	first := sf(exp)
	require.Equal(t, exitPartial, first.code, first.stderr)
	fix := filepath.Join(t.TempDir(), "fix")
	r := crm(t, nil, "--db", db, "rejects", "1", "--out", fix, "--as-export")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "Opportunity.csv")
	require.Contains(t, r.stdout, "ContentVersion.csv")
	man, err := fixmanifest.Read(fix)
	require.NoError(t, err)
	var roles []string
	for _, a := range man.SideFiles {
		roles = append(roles, a.Role)
		require.NotEmpty(t, a.Fingerprint, a.File)
	}
	require.Subset(t, roles, []string{"join:opportunitycontactrole.csv", "join:contentdocumentlink.csv", "bodies:contentversion"})

	fixCSV(t, filepath.Join(fix, "Opportunity.csv"), resave{comma: ';', crlf: true, changed: func(row map[string]string) {
		row["Amount"] = "125000.50"
	}})
	fixCSV(t, filepath.Join(fix, "ContentVersion.csv"), resave{comma: ',', crlf: true, cp1252: true, changed: func(row map[string]string) {
		row["CreatedDate"] = "2024-02-05 09:30:00"
		row["Title"] = "Démo request"
	}})
	// Before the fix run, a second fix folder of the same run, for the
	// refusals below.
	fix2 := filepath.Join(t.TempDir(), "fix2")
	r = crm(t, nil, "--db", db, "rejects", "1", "--out", fix2, "--as-export")
	require.Equal(t, 0, r.code, r.stderr)

	second := sf(fix)
	require.Equal(t, 0, second.code, second.stderr)
	for _, side := range []string{"OpportunityContactRole.csv", "ContentDocumentLink.csv", "ContentVersion"} {
		require.Contains(t, second.stderr, "read "+side+" beside it from "+filepath.Join(exp, side)+", found through the fix folder's manifest")
	}
	require.NotContains(t, second.stderr, "no file of the export matches")
	s := second.summary(t)
	require.Equal(t, phases.Counts{Imported: 1}, s.Kinds["deal"])
	require.Equal(t, phases.Counts{Imported: 1}, s.Kinds["note"])
	require.Equal(t, []string{"0035g00000QxAa2AAF"}, query(t, db, `SELECT cr.source_id FROM deals d
		JOIN migration_records r ON r.record_type = 'deals' AND r.record_id = d.id
		JOIN migration_records cr ON cr.record_type = 'contacts' AND cr.record_id = d.contact_id
		WHERE r.source_id = '0065g00000HkOp2AAF'`), "the deal's contact, from OpportunityContactRole")
	require.Equal(t, []string{"0035g00000QxAa2AAF|<p>Grace asked for a <b>fleet demo</b> in March.</p> <p>Send the brochure &amp; the price list.</p>"},
		query(t, db, `SELECT cr.source_id, n.body FROM notes n
		JOIN migration_records r ON r.record_type = 'notes' AND r.record_id = n.id
		JOIN migration_records cr ON cr.record_type = 'contacts' AND cr.record_id = n.contact_id
		WHERE r.source_id = '0685g00000Cv001AAB'`), "the note's body and contact, from ContentVersion/ and ContentDocumentLink")

	runs := func() []string { return query(t, db, `SELECT id FROM migrations ORDER BY id`) }
	before := runs()
	ocr := filepath.Join(exp, "OpportunityContactRole.csv")
	b, err := os.ReadFile(ocr)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(ocr, append(b, []byte(`"00K5g00000Rr009EAB","0065g00000HkOp2AAF","0035g00000QxAa1AAF","Evaluator","1","2023-11-02 09:14:27","0055g00000AbCdEAAV","2023-11-02 09:14:27","2023-11-02 09:14:27","0"`+"\n")...), 0o600))
	changed := sf(fix2)
	require.Equal(t, exitError, changed.code, changed.stderr)
	require.Contains(t, changed.stdout, filepath.Join(fix2, "Opportunity.csv")+": reads OpportunityContactRole.csv beside it")
	require.Contains(t, changed.stdout, "it has changed since run 1 read it")
	require.Contains(t, changed.stdout, "copy the file as it should be read into "+fix2)
	require.NoError(t, os.Remove(ocr))
	gone := sf(fix2)
	require.Equal(t, exitError, gone.code, gone.stderr)
	require.Contains(t, gone.stdout, "it is gone")
	require.Equal(t, before, runs(), "a refused plan leaves no run row")
	only := sf("--only", "notes", fix2)
	require.Equal(t, 0, only.code, "the other kinds still import: %s", only.stderr)
}

// The desktop's API: edited rows of one file written as a one-file fix
// folder, a run over it, and what became of each row.
func TestFixEditedRows(t *testing.T) {
	t.Parallel()
	_, db := demoRun(t)
	sqlDB := storetest.OpenFile(t, db)
	byID := map[string]int64{}
	require.NoError(t, report.EachFailure(t.Context(), sqlDB, 1, func(f report.Failure) error {
		if f.Kind == "contact" {
			byID[f.SourceID] = f.ID
		}
		return nil
	}))
	parent := filepath.Join(t.TempDir(), "fixes")
	dir, err := fixfile.WriteEdited(t.Context(), sqlDB, 1, "contacts.csv", []fixfile.EditedRow{
		{Failure: byID["con-022"], Cells: []report.RawCell{{Name: "email", Value: "dana.whitfield@northgate-dental.example.com"}}},
		{Failure: byID["con-031"], Cells: []report.RawCell{{Name: "first_name", Value: "José"}, {Name: "id", Value: "con-031b"}}},
		{Failure: byID["con-077"], Cells: []report.RawCell{{Name: "title", Value: "Cellist"}}}, // still not an email
		{Failure: byID["con-015"]}, // a repeat of an imported id
	}, parent)
	require.NoError(t, err)
	require.Equal(t, parent, filepath.Dir(dir))
	st, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 3, "contacts.csv, reasons.csv and the manifest")

	_, err = fixfile.WriteEdited(t.Context(), sqlDB, 1, "deals.csv", []fixfile.EditedRow{{Failure: byID["con-022"]}}, parent)
	require.ErrorContains(t, err, "is a row of contacts.csv, not of deals.csv")
	_, err = fixfile.WriteEdited(t.Context(), sqlDB, 1, "contacts.csv", []fixfile.EditedRow{
		{Failure: byID["con-022"], Cells: []report.RawCell{{Name: "nickname", Value: "D"}}}}, parent)
	require.ErrorContains(t, err, `contacts.csv has no column "nickname"`)

	r := crm(t, nil, "--db", db, "--json", "run", "--tenant", "acme", "--source", "canonical", "--only", "contacts", dir)
	require.Equal(t, exitPartial, r.code, r.stderr)
	out, err := fixfile.Outcomes(t.Context(), sqlDB, r.summary(t).Run)
	require.NoError(t, err)
	got := map[string]string{}
	for _, o := range out {
		got[o.SourceID] = o.Outcome + " " + o.Action + " " + o.Reason
	}
	require.Equal(t, map[string]string{
		"con-022":  "imported created ",
		"con-031b": "imported created ",
		"con-077":  `failed  email "Tom Baker <tom.baker@meadowlark-music.example.org>" is not an email address`,
		"con-015":  "unchanged created ",
	}, got)
	require.Equal(t, []string{"José"}, query(t, db, `SELECT c.first_name FROM contacts c
		JOIN migration_records r ON r.record_type = 'contacts' AND r.record_id = c.id WHERE r.source_id = 'con-031b'`))
}

// Rows that are not whole: a ragged row keeps its length in the fix file
// and fails again with its reason; a row that could not be read as a row
// (a broken quote) is in reasons.csv only, with its text.
func TestFixFolderBrokenRows(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, fixture string
		rows          []string // the fix file's lines after the header
		reasons       []string // in reasons.csv
	}{
		{"RaggedRows", "21-ragged-rows", []string{
			`con-2002,Grace,Lindqvist,grace.lindqvist@harbor-logistics.example.com,,Head of Sales," EMEA",,2023-01-19,false`,
			`con-2003,Tomasz,Nowicki,tomasz.nowicki@harbor-logistics.example.com`,
		}, []string{`contacts.csv,2,con-2002,"row has 10 fields, the header has 9",contacts.csv:3,`}},
		{"BadQuotes", "22-bad-quotes", []string{}, []string{
			`contacts.csv,,con-2102,"bare "" in an unquoted field at line 3, column 17`,
			`it could not be read as a row; correct its text and add it there",contacts.csv:3,"con-2102,Dwayne ""The Rock"",Johnson,`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			exp := t.TempDir()
			require.NoError(t, os.CopyFS(exp, os.DirFS(filepath.Join("../../fixtures/bad/canonical", tt.fixture))))
			db := filepath.Join(t.TempDir(), "crm.db")
			r := crm(t, nil, "--db", db, "--quiet", "run", "--tenant", "acme", "--source", "canonical", exp)
			require.Equal(t, exitPartial, r.code, r.stderr)
			fix := filepath.Join(t.TempDir(), "fix")
			r = crm(t, nil, "--db", db, "rejects", "1", "--out", fix, "--as-export")
			require.Equal(t, 0, r.code, r.stderr)
			b, err := os.ReadFile(filepath.Join(fix, "contacts.csv"))
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			require.Equal(t, tt.rows, lines[1:])
			reasons, err := os.ReadFile(filepath.Join(fix, fixmanifest.ReasonsName))
			require.NoError(t, err)
			for _, want := range tt.reasons {
				require.Contains(t, string(reasons), want)
			}
			again := crm(t, nil, "--db", db, "--json", "run", "--tenant", "acme", "--source", "canonical", fix)
			require.Equal(t, int64(len(tt.rows)), again.summary(t).Kinds["contact"].Failed, again.stderr)
			if len(tt.rows) > 0 {
				want := failuresOf(t, db, 1)
				require.Equal(t, want, failuresOf(t, db, again.summary(t).Run), "the same reasons")
			}
		})
	}
}

// TestFixFolderOfAWorkbook: a workbook's failed rows (issue 15 item 1)
// go to the fix folder as contacts.csv, under their sheet's header, the
// value a workbook kept past its header as the row's last field; each says
// the sheet's row it came from; fixed, the folder imports through the
// pattern that read the workbook, and the row still wrong fails again.
func TestFixFolderOfAWorkbook(t *testing.T) {
	t.Parallel()
	exp := t.TempDir()
	wb, err := os.ReadFile(filepath.Join(readertest.XLSXFixtureDir(t), "contacts.xlsx"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(exp, "contacts.xlsx"), wb, 0o600))
	db := filepath.Join(t.TempDir(), "crm.db")
	first := crm(t, nil, "--db", db, "--quiet", "run", "--tenant", "acme", "--source", "canonical", exp)
	require.Equal(t, exitPartial, first.code, first.stderr)
	require.Equal(t, []string{"contacts.xlsx!Contacts|5", "contacts.xlsx!Contacts|6", "contacts.xlsx!Contacts|7"},
		query(t, db, `SELECT file || '|' || line FROM record_failures ORDER BY line`))

	fix := filepath.Join(t.TempDir(), "fix-1")
	r := crm(t, nil, "--db", db, "rejects", "1", "--out", fix, "--as-export")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "contacts.csv                 3 rows (contact)")
	text, err := os.ReadFile(filepath.Join(fix, "contacts.csv"))
	require.NoError(t, err)
	require.Equal(t, "\ufeffid,first_name,last_name,email,phone,created_at,signed_up,score,vip,company_id,note\n"+
		"9.91214E+18,Hiro,太田,,,1900-03-01T00:00:00,1900-01-01,,true,,snake_x000D_case\n"+
		"123456789012345,Dana,,dana@example.com,,18:00:00,,-1234.5,,,\n"+
		"20676798570,Eve,,,,,,,,,,stray\n", string(text))
	reasons, err := os.ReadFile(filepath.Join(fix, "reasons.csv"))
	require.NoError(t, err)
	require.Contains(t, string(reasons), ",contacts.xlsx!Contacts:5,")

	fixed := strings.Replace(strings.Replace(string(text), "9.91214E+18", "9912143456789012345", 1), ",18:00:00,", ",2024-01-01,", 1)
	require.NoError(t, os.WriteFile(filepath.Join(fix, "contacts.csv"), []byte(fixed), 0o600))
	second := crm(t, nil, "--db", db, "--json", "--quiet", "run", "--tenant", "acme", "--source", "canonical", fix)
	require.Equal(t, exitPartial, second.code, second.stderr)
	require.Equal(t, []string{"contact|20676798570|row has 12 fields, the header has 11"},
		failuresOf(t, db, second.summary(t).Run), "the stray value still fails")
	require.Equal(t, []string{"123456789012345|2024-01-01", "9912143456789012345|1900-03-01T00:00:00"},
		query(t, db, `SELECT k.source_id || '|' || c.created_at FROM migration_records k JOIN contacts c ON c.id = k.record_id
			WHERE k.migration_id = 2 ORDER BY k.source_id`))
}

// Issue 23 item 13: a run over a fix folder reads only the failed rows it
// holds, so the skips of the run it fixes are still the latest attempt at
// their records, not stale (R3); doctor names what is true — the note that
// waited for the contact fixed now is ready to take over — and no poisoned
// ledger. The run doctor then proposes takes it over and leaves doctor
// clean.
func TestDoctorAfterFixFolder(t *testing.T) {
	t.Parallel()
	exp := copyDemo(t)
	storetest.RunAddress(t, func(t *testing.T, db string) {
		first := crm(t, nil, "--db", db, "--quiet", "run", "--tenant", "acme", "--source", "canonical", exp)
		require.Equal(t, exitPartial, first.code, first.stderr)
		d, r := doctorJSON(t, db)
		require.Equal(t, exitOK, r.code, r.stdout)
		require.True(t, d.Clean)

		fix := filepath.Join(t.TempDir(), "fix-1")
		r = crm(t, nil, "--db", db, "rejects", "1", "--out", fix, "--as-export")
		require.Equal(t, exitOK, r.code, r.stderr)
		fixCSV(t, filepath.Join(fix, "contacts.csv"), resave{comma: ',', changed: func(row map[string]string) {
			if row["id"] == "con-022" {
				row["email"] = "dana.whitfield@northgate-dental.example.com"
			}
		}})
		second := crm(t, nil, "--db", db, "--json", "--quiet", "run", "--tenant", "acme", "--source", "canonical", fix)
		require.Equal(t, exitPartial, second.code, second.stderr)
		require.Equal(t, int64(1), second.summary(t).Kinds["contact"].Imported, "con-022 imports")

		d, r = doctorJSON(t, db)
		require.Equal(t, exitFindings, r.code, r.stdout)
		require.Equal(t, []string{"ready-to-take-over"}, d.names(), "%+v", d.Findings)
		require.Equal(t, []string{"note nt-019"}, d.Findings[0].Examples, "the note that waited for con-022")
		require.Empty(t, d.Incidents)

		third := crm(t, nil, "--db", db, "--json", "--quiet", "run", "--tenant", "acme", "--source", "canonical", "--only", "notes", exp)
		require.Equal(t, exitPartial, third.code, third.stderr) // nt-075 still fails
		require.Equal(t, []string{"created|3"}, query(t, db, `SELECT action, migration_id FROM migration_records
			WHERE kind = 'note' AND source_id = 'nt-019'`))
		d, r = doctorJSON(t, db)
		require.Equal(t, exitOK, r.code, r.stdout)
		require.True(t, d.Clean)
	})
}

// moveSideFile moves the side file of role that fix's manifest names to
// to, and points the manifest there, as a person tidying an export would.
func moveSideFile(t *testing.T, fix, role, to string) {
	t.Helper()
	man, err := fixmanifest.Read(fix)
	require.NoError(t, err)
	moved := false
	for i, a := range man.SideFiles {
		if a.Role == role {
			require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o700))
			require.NoError(t, os.Rename(a.File, to))
			man.SideFiles[i].File, moved = to, true
		}
	}
	require.True(t, moved, "the manifest names %s", role)
	b, err := json.MarshalIndent(man, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(fix, fixmanifest.Name), b, 0o600))
}

// Issue 23 item 6: a fix folder whose manifest names a side file at a path
// where the run would not read it as what it is — the file joined to
// Opportunity.csv, or the folder of ContentVersion bodies, under another
// name — is refused before any run exists (exit 1, no run row), as one
// that is gone is: read otherwise, the join is dropped and the fixed deal
// imports without its contact, for good (a created slot is final, R2).
// The file copied into the fix folder under the profile's name gives the
// join back: the deal imports with its contact.
func TestFixFolderSideFileElsewhere(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, db string) {
		exp := breakSalesforce(t)
		sf := func(more ...string) result {
			return crm(t, nil, append([]string{"--db", db, "--json", "run", "--tenant", "acme", "--source", "salesforce"}, more...)...)
		}
		first := sf(exp)
		require.Equal(t, exitPartial, first.code, first.stderr)
		fix := filepath.Join(t.TempDir(), "fix")
		r := crm(t, nil, "--db", db, "rejects", "1", "--out", fix, "--as-export")
		require.Equal(t, exitOK, r.code, r.stderr)
		fixCSV(t, filepath.Join(fix, "Opportunity.csv"), resave{comma: ',', changed: func(row map[string]string) { row["Amount"] = "125000.50" }})
		fixCSV(t, filepath.Join(fix, "ContentVersion.csv"), resave{comma: ',', changed: func(row map[string]string) {
			row["CreatedDate"] = "2024-02-05 09:30:00"
		}})
		runs := func() []string { return query(t, db, `SELECT id FROM migrations ORDER BY id`) }
		before := runs()

		elsewhere := t.TempDir()
		roles := filepath.Join(elsewhere, "roles.csv")
		moveSideFile(t, fix, "join:opportunitycontactrole.csv", roles)
		refused := sf(fix)
		require.Equal(t, exitError, refused.code, refused.stderr)
		require.Contains(t, refused.stdout, filepath.Join(fix, "Opportunity.csv")+": the fix folder's manifest names "+roles)
		require.Contains(t, refused.stdout, "the file the salesforce profile joins to it (opportunitycontactrole.csv)")
		require.Contains(t, refused.stdout, "copy it into "+fix+" as opportunitycontactrole.csv")
		require.Equal(t, before, runs(), "a refused plan leaves no run row")

		// With the join file given back, the body folder under another name.
		require.NoError(t, os.Rename(roles, filepath.Join(fix, "OpportunityContactRole.csv")))
		bodies := filepath.Join(elsewhere, "bodies")
		moveSideFile(t, fix, "bodies:contentversion", bodies)
		refused = sf(fix)
		require.Equal(t, exitError, refused.code, refused.stderr)
		require.Contains(t, refused.stdout, filepath.Join(fix, "ContentVersion.csv")+": the fix folder's manifest names "+bodies)
		require.Contains(t, refused.stdout, "the folder of body files the salesforce profile reads beside it (contentversion)")
		require.Equal(t, before, runs(), "a refused plan leaves no run row")
		require.NoError(t, os.Rename(bodies, filepath.Join(fix, "ContentVersion")))

		second := sf(fix)
		require.Equal(t, exitOK, second.code, second.stderr)
		require.NotContains(t, second.stderr, "no file of the export matches")
		s := second.summary(t)
		require.Equal(t, phases.Counts{Imported: 1}, s.Kinds["deal"])
		require.Equal(t, phases.Counts{Imported: 1}, s.Kinds["note"])
		require.Equal(t, []string{"0035g00000QxAa2AAF"}, query(t, db, `SELECT cr.source_id FROM deals d
		JOIN migration_records r ON r.record_type = 'deals' AND r.record_id = d.id
		JOIN migration_records cr ON cr.record_type = 'contacts' AND cr.record_id = d.contact_id
		WHERE r.source_id = '0065g00000HkOp2AAF'`), "the deal's contact, from OpportunityContactRole")
	})
}

// Issue 23 item 6: a fix folder imported as another tenant or source than
// its run's, with another profile, or with a file renamed to another kind,
// is read as asked — but the run's summary (and report) says so among its
// warnings, with what it means, not only a notice on stderr. The folder
// imported as its run was gives none.
func TestFixFolderReadOtherwise(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, db string) {
		exp := copyDemo(t)
		first := crm(t, nil, "--db", db, "--quiet", "run", "--tenant", "acme", "--source", "canonical", exp)
		require.Equal(t, exitPartial, first.code, first.stderr)
		fix := filepath.Join(t.TempDir(), "fix-1")
		r := crm(t, nil, "--db", db, "rejects", "1", "--out", fix, "--as-export")
		require.Equal(t, exitOK, r.code, r.stderr)
		// A copy of the folder per way of reading it: a run's own tasks
		// vouch for their inputs (the same-input shortcut), and each run
		// here must read its rows.
		folder := func(name string) string {
			dir := filepath.Join(t.TempDir(), name)
			require.NoError(t, os.CopyFS(dir, os.DirFS(fix)))
			return dir
		}
		warnings := func(args ...string) []string {
			t.Helper()
			r := crm(t, nil, append([]string{"--db", db, "--json", "--quiet", "run"}, args...)...)
			require.Contains(t, []int{exitPartial, exitFailed}, r.code, r.stderr) // the rows not fixed fail again
			s := r.summary(t)
			rep := crm(t, nil, "--db", db, "--json", "report", fmt.Sprint(s.Run), "--format", "json")
			require.Equal(t, exitOK, rep.code, rep.stderr)
			require.Equal(t, s.Warnings, rep.summary(t).Warnings, "report repeats the summary's warnings")
			return s.Warnings
		}

		require.Empty(t, warnings("--tenant", "acme", "--source", "canonical", folder("same")))

		beta := folder("beta")
		ws := warnings("--tenant", "beta", "--source", "canonical", beta)
		require.Len(t, ws, 1, "%q", ws)
		require.Contains(t, ws[0], beta+" is a fix folder of run 1 of tenant acme, imported as tenant beta")
		require.Contains(t, ws[0], "pass --tenant acme")

		other := folder("other")
		ws = warnings("--tenant", "acme", "--source", "crm2", "--profile", "canonical", other)
		require.Len(t, ws, 1, "%q", ws)
		require.Contains(t, ws[0], other+" is a fix folder of run 1 of source canonical, imported as source crm2")
		require.Contains(t, ws[0], "pass --source canonical")
		// inspect, which the New import page shows, says the same.
		r = crm(t, nil, "--json", "inspect", "--source", "crm2", "--profile", "canonical", other)
		require.Equal(t, exitOK, r.code, r.stderr)
		var ins importer.Inspection
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &ins))
		require.Equal(t, ws, ins.Warnings)

		hubspot := folder("hubspot")
		require.NoError(t, os.Rename(filepath.Join(hubspot, "contacts.csv"), filepath.Join(hubspot, "hubspot-crm-exports-all-contacts-2024.csv")))
		ws = warnings("--tenant", "acme", "--source", "canonical", "--profile", "hubspot", hubspot)
		require.Contains(t, ws, hubspot+" is a fix folder of run 1, which read it with the canonical profile; this run reads it with the hubspot profile, "+
			"which may map its columns otherwise: pass --profile canonical to read it as run 1 did")

		// A Salesforce fix folder (deals and notes) whose Opportunity.csv
		// was renamed Contact.csv: its rows are read as contacts.
		sf := crm(t, nil, "--db", db, "--json", "--quiet", "run", "--tenant", "acme", "--source", "salesforce", breakSalesforce(t))
		require.Equal(t, exitPartial, sf.code, sf.stderr)
		renamed := filepath.Join(t.TempDir(), "renamed")
		r = crm(t, nil, "--db", db, "rejects", fmt.Sprint(sf.summary(t).Run), "--out", renamed, "--as-export")
		require.Equal(t, exitOK, r.code, r.stderr)
		require.NoError(t, os.Rename(filepath.Join(renamed, "Opportunity.csv"), filepath.Join(renamed, "Contact.csv")))
		ws = warnings("--tenant", "acme", "--source", "salesforce", renamed)
		require.Len(t, ws, 1, "%q", ws)
		require.Equal(t, filepath.Join(renamed, "Contact.csv")+fmt.Sprintf(" is read as contacts, a kind of which the fix folder of run %d "+
			"holds no rows (its manifest names Opportunity.csv (deals), ContentVersion.csv (notes)): a fix file renamed to another kind "+
			"imports its rows as that kind; give it back its name unless that is what you mean", sf.summary(t).Run), ws[0])
	})
}

// TestFixFolderCarriesUpdate (R17, SPEC §11): the fix folder of a run that
// had --update carries it in its manifest, and a run over the folder
// applies changes at the source too, saying so; the page's re-import does
// the same (runs.FixSpec).
func TestFixFolderCarriesUpdate(t *testing.T) {
	t.Parallel()
	exp := filepath.Join(t.TempDir(), "export")
	require.NoError(t, os.CopyFS(exp, os.DirFS(demo)))
	db := filepath.Join(t.TempDir(), "crm.db")
	first := crm(t, nil, "--db", db, "--json", "--quiet", "run", "--tenant", "acme", "--source", "canonical", exp)
	require.Equal(t, exitPartial, first.code, first.stderr)

	second := crm(t, nil, "--db", db, "--json", "--quiet", "run", "--tenant", "acme", "--source", "canonical", "--update", exp)
	require.Equal(t, exitPartial, second.code, second.stderr)
	run2 := second.summary(t).Run
	fix := filepath.Join(t.TempDir(), "fix")
	r := crm(t, nil, "--db", db, "--json", "rejects", strconv.FormatInt(run2, 10), "--out", fix, "--as-export")
	require.Equal(t, 0, r.code, r.stderr)
	man, err := fixmanifest.Read(fix)
	require.NoError(t, err)
	require.Equal(t, "apply", man.Update, "the manifest carries the run's --update")

	third := crm(t, nil, "--db", db, "--json", "run", "--tenant", "acme", "--source", "canonical", fix)
	require.Equal(t, exitPartial, third.code, third.stderr)
	require.Contains(t, third.stderr, fmt.Sprintf("the fix folder's manifest says run %d had --update: this run applies changes at the source too", run2))
	require.Equal(t, []string{"1"}, query(t, db, `SELECT count(*) FROM migrations WHERE id = ? AND options LIKE '%"update":"apply"%'`,
		third.summary(t).Run), "the run over the folder is kept with --update (resume does the same)")
}
