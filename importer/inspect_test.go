package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/input"
	"crmimport/importer/input/inputtest"
	"crmimport/importer/profile"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// The small export of the inspection tests: companies with one that fails
// and an unmapped column, contacts with ";" and a duplicate, notes of
// every outcome a row decides alone, a file and a folder left out.
const (
	inspCompanies = "id,name,domain,Region\nco-1,Acme,acme.example,West\nco-2,,globex.example,\nco-3,Initech,,East\n"
	inspContacts  = "id;first_name;email;company_id\nc-1;Ann;ANN@acme.example;co-1\nc-2;Bob;not-an-address;co-1\nc-1;Ann again;;\n"
	inspNotes     = "id,body,contact_id,deleted\nn-1,Hello,c-1,\nn-2,,c-1,\nn-3,Gone,c-1,true\nn-4,Orphan,,\n"
)

func inspectExport(t *testing.T, spec InspectSpec) Inspection {
	t.Helper()
	ins, err := Inspect(context.Background(), spec)
	require.NoError(t, err)
	return ins
}

func fileOf(t *testing.T, ins Inspection, name string) FileInspection {
	t.Helper()
	for _, f := range ins.Files {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no file %s in the inspection: %+v", name, ins.Files)
	return FileInspection{}
}

func outcomes(f FileInspection) []string {
	var out []string
	for _, r := range f.Rows {
		out = append(out, r.ID+" "+r.Outcome+" "+r.Reason)
	}
	return out
}

// TestInspectSmallExport: every field of an inspection, on a small export
// — the plan (files, kinds, phases, formats, sizes, fingerprints,
// encodings and why), what is left out and the notice that says so, the
// delimiter, each column's field or extra, the links of each kind, and the
// first rows as mapped with what their own values make of them.
func TestInspectSmallExport(t *testing.T) {
	t.Parallel()
	dir := export(t, map[string]string{"companies.csv": inspCompanies, "contacts.csv": inspContacts, "notes.csv": inspNotes,
		"README.txt": "read me"})
	require.NoError(t, os.Mkdir(filepath.Join(dir, "attachments"), 0o700))
	ins := inspectExport(t, InspectSpec{Source: "canonical", Input: dir})

	require.Equal(t, "canonical", ins.Source)
	require.Equal(t, "canonical", ins.Profile)
	require.Empty(t, ins.ProfileFile, "a built-in profile")
	require.Equal(t, []string{dir}, ins.Inputs)
	require.Empty(t, ins.Only)
	require.Empty(t, ins.Problems)
	require.Empty(t, ins.Warnings)
	require.Empty(t, ins.SideFiles)

	var plan []string
	for _, f := range ins.Files {
		plan = append(plan, f.Name+" "+string(f.Kind)+" "+string(f.Format)+" "+f.Encoding)
		require.Equal(t, filepath.Join(dir, f.Name), f.File)
		require.Equal(t, phases.Phase(f.Kind), f.Phase)
		require.Empty(t, f.Problem, f.Name)
		fp, err := input.Fingerprint(context.Background(), f.File, input.DefaultLimits())
		require.NoError(t, err)
		require.Equal(t, fp, f.Fingerprint, "the plan's fingerprint (R10)")
		require.Equal(t, "it is ASCII (valid UTF-8)", f.EncodingWhy)
	}
	require.Equal(t, []string{"companies.csv company csv utf-8", "contacts.csv contact csv utf-8", "notes.csv note csv utf-8"}, plan,
		"in the order a run works: by phase")
	require.Equal(t, int64(len(inspCompanies)), ins.Files[0].Size)

	require.Equal(t, []LeftOut{{Name: "attachments", Reason: input.FolderNotRead}, {Name: "README.txt", Reason: "not a file of the canonical profile"}},
		ins.LeftOut)
	require.Len(t, ins.Notices, 2)
	require.Contains(t, ins.Notices[0], "ignored the folder attachments")
	require.Contains(t, ins.Notices[1], "ignored 1 file not of the canonical profile: README.txt")

	companies := fileOf(t, ins, "companies.csv")
	require.Equal(t, ",", companies.Delimiter)
	require.Equal(t, []profile.Column{{Name: "id", Field: "id"}, {Name: "name", Field: "name"}, {Name: "domain", Field: "domain"},
		{Name: "Region", Field: profile.ColumnExtra}}, companies.Columns)
	require.Equal(t, []profile.Link{{Field: "owner_id", Kind: ledger.User, Columns: []string{"owner_id"}}}, companies.Links,
		"a company links to its owner alone")
	require.Equal(t, []string{"co-1 valid ", "co-2 failed company has no name", "co-3 valid "}, outcomes(companies))
	require.Equal(t, RowInspection{Line: 2, ID: "co-1", Fields: map[string]string{"id": "co-1", "name": "Acme", "domain": "acme.example"},
		Extra: map[string]any{"Region": "West"}, Outcome: RowValid}, companies.Rows[0])
	require.Nil(t, companies.Rows[1].Extra, "an empty cell is not kept")

	contacts := fileOf(t, ins, "contacts.csv")
	require.Equal(t, ";", contacts.Delimiter)
	link := profile.Link{Field: "company_id", Kind: ledger.Company, Columns: []string{"company_id"}}
	require.Equal(t, []profile.Link{link, {Field: "owner_id", Kind: ledger.User, Columns: []string{"owner_id"}}}, contacts.Links)
	require.Equal(t, profile.Column{Name: "company_id", Field: "company_id", Link: &link}, contacts.Columns[3])
	require.Equal(t, []string{"c-1 valid ", `c-2 failed email "not-an-address" is not an email address`,
		"c-1 failed duplicate source_id, first at contacts.csv:2"}, outcomes(contacts))
	require.Equal(t, "ANN@acme.example", contacts.Rows[0].Fields["email"], "the value as mapped; the match key is the ledger's")

	notes := fileOf(t, ins, "notes.csv")
	require.Equal(t, []string{"n-1 valid ", "n-2 skipped empty body", "n-3 skipped deleted in source", "n-4 skipped not linked to any record"},
		outcomes(notes))
	require.Len(t, notes.Links, 5, "contact, lead, company, deal, owner")

	// Rows bounds what is mapped.
	ins = inspectExport(t, InspectSpec{Source: "canonical", Input: dir, Rows: 1})
	for _, f := range ins.Files {
		require.Len(t, f.Rows, 1, f.Name)
	}
}

// TestInspectJSONDocument: an inspection is a JSON document with the names
// the desktop reads, and every list present (empty, not null).
func TestInspectJSONDocument(t *testing.T) {
	t.Parallel()
	dir := export(t, map[string]string{"companies.csv": inspCompanies})
	b, err := json.Marshal(inspectExport(t, InspectSpec{Source: "canonical", Input: dir}))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	for _, k := range []string{"files", "left_out", "side_files", "notices", "warnings", "problems"} {
		require.IsType(t, []any{}, doc[k], k)
	}
	f := doc["files"].([]any)[0].(map[string]any)
	for _, k := range []string{"file", "name", "kind", "phase", "format", "size", "fingerprint", "encoding", "encoding_why", "delimiter",
		"columns", "links", "side_files", "rows"} {
		require.Contains(t, f, k)
	}
	require.Equal(t, "company", f["kind"])
	row := f["rows"].([]any)[0].(map[string]any)
	require.Equal(t, map[string]any{"line": float64(2), "id": "co-1", "fields": map[string]any{"id": "co-1", "name": "Acme", "domain": "acme.example"},
		"extra": map[string]any{"Region": "West"}, "outcome": "valid"}, row)
}

// TestInspectZip: a zip is read in place; its files are named ZIP!/ENTRY,
// fingerprinted as the plan does (the zip's CRC-32 of the entry), and its
// other folders left out.
func TestInspectZip(t *testing.T) {
	t.Parallel()
	z := filepath.Join(t.TempDir(), "export.zip")
	inputtest.WriteZip(t, z, [2]string{"companies.csv", inspCompanies}, [2]string{"contacts.csv", inspContacts},
		[2]string{"Attachments/00P1", "%PDF"})
	ins := inspectExport(t, InspectSpec{Source: "canonical", Input: z})
	require.Len(t, ins.Files, 2)
	f := ins.Files[0]
	require.Equal(t, z+"!/companies.csv", f.File)
	require.Equal(t, "export.zip!/companies.csv", f.Name)
	require.Equal(t, int64(len(inspCompanies)), f.Size, "the entry's bytes, uncompressed")
	fp, err := input.Fingerprint(context.Background(), f.File, input.DefaultLimits())
	require.NoError(t, err)
	require.Equal(t, fp, f.Fingerprint)
	require.Equal(t, []string{"co-1 valid ", "co-2 failed company has no name", "co-3 valid "}, outcomes(f))
	require.Equal(t, []LeftOut{{Name: "export.zip!/Attachments", Reason: input.FolderNotRead}}, ins.LeftOut)
}

// TestInspectFileProblems: a file whose task would fail at open is told
// for that file, with the error the task would fail with, and the other
// files are inspected all the same: no id column (its columns still
// shown), not CSV, a broken header.
func TestInspectFileProblems(t *testing.T) {
	t.Parallel()
	dir := export(t, map[string]string{"companies.csv": inspCompanies, "contacts.csv": "name,email\nAnn,ann@acme.example\n",
		"deals.csv": "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "notes.csv": "id,\"body\n"})
	ins := inspectExport(t, InspectSpec{Source: "canonical", Input: dir})
	require.Len(t, ins.Files, 4, "every file planned")
	require.Equal(t, []string{"co-1 valid ", "co-2 failed company has no name", "co-3 valid "}, outcomes(fileOf(t, ins, "companies.csv")))

	contacts := fileOf(t, ins, "contacts.csv")
	require.Equal(t, `contacts.csv:1: no id column: the header has 2 columns ("name", "email") and none of them is "id"`, contacts.Problem)
	require.Equal(t, []profile.Column{{Name: "name", Field: profile.ColumnExtra}, {Name: "email", Field: "email"}}, contacts.Columns)
	require.Empty(t, contacts.Rows, "a task that fails at open reads no row")

	deals := fileOf(t, ins, "deals.csv")
	require.Equal(t, "deals.csv: is a PNG image, not CSV", deals.Problem)
	require.Empty(t, deals.Columns)

	notes := fileOf(t, ins, "notes.csv")
	require.Contains(t, notes.Problem, "notes.csv:1: header: ")

	var problems []string
	for _, p := range ins.Problems {
		problems = append(problems, p.File+" "+string(p.Kind))
		require.Equal(t, fileOf(t, ins, p.File).Problem, p.Error)
	}
	require.Equal(t, []string{"contacts.csv contact", "deals.csv deal", "notes.csv note"}, problems)

	// The same errors a run's tasks fail with.
	db := storetest.OpenDB(t)
	imp := New(phases.New(db, nil))
	run, err := imp.Plan(context.Background(), RunSpec{Tenant: "acme", Source: "canonical", Input: dir})
	require.NoError(t, err)
	_, err = imp.Execute(context.Background(), run.ID)
	require.NoError(t, err)
	tasks, err := phases.LoadTasks(context.Background(), db, run.ID)
	require.NoError(t, err)
	for _, task := range tasks {
		if task.Kind == ledger.Contact {
			require.Equal(t, phases.TaskFailed, task.Status)
			require.Equal(t, contacts.Problem, task.LastError)
		}
	}
}

// TestInspectOnly: --only plans the kinds asked for; the files of the other
// kinds are left out, saying so, and a kind with no file is noticed, as
// planning does. No file of the kinds asked for refuses, as Plan does.
func TestInspectOnly(t *testing.T) {
	t.Parallel()
	dir := export(t, map[string]string{"companies.csv": inspCompanies, "contacts.csv": inspContacts, "notes.csv": inspNotes})
	ins := inspectExport(t, InspectSpec{Source: "canonical", Input: dir, Only: []ledger.Kind{ledger.Note, ledger.Deal}})
	require.Equal(t, []string{"note", "deal"}, ins.Only)
	require.Len(t, ins.Files, 1)
	require.Equal(t, "notes.csv", ins.Files[0].Name)
	require.Equal(t, []LeftOut{{Name: "companies.csv", Reason: "a company file: --only does not ask for companies"},
		{Name: "contacts.csv", Reason: "a contact file: --only does not ask for contacts"}}, ins.LeftOut)
	require.Equal(t, []string{"--only deals: no deals file in " + dir}, ins.Notices)

	_, err := Inspect(context.Background(), InspectSpec{Source: "canonical", Input: dir, Only: []ledger.Kind{ledger.Email}})
	var ie *input.Error
	require.ErrorAs(t, err, &ie)
	require.Equal(t, dir+": no file matches the kinds asked for with --only", err.Error())
}

// TestInspectRefusesAsPlanDoes: what would refuse the run is Inspect's
// error, of the type and with the message Plan gives — an unknown profile
// or encoding (a usage error, exit 2), no file that matches, a named pipe, a
// zip bomb, a zip that is not one, a single file that is not one of the
// profile's (exit 1).
func TestInspectRefusesAsPlanDoes(t *testing.T) {
	t.Parallel()
	dir := export(t, map[string]string{"companies.csv": inspCompanies})
	fifo := export(t, map[string]string{"companies.csv": inspCompanies})
	require.NoError(t, syscall.Mkfifo(filepath.Join(fifo, "contacts.csv"), 0o600))
	var bomb bytes.Buffer
	bomb.WriteString("id,name\n")
	bomb.Write(bytes.Repeat([]byte("x"), 4<<20))
	zipBomb := filepath.Join(t.TempDir(), "bomb.zip")
	inputtest.WriteZip(t, zipBomb, [2]string{"companies.csv", bomb.String()})
	other := export(t, map[string]string{"accounts.txt": "id\n"})
	notZip := filepath.Join(t.TempDir(), "export.zip")
	require.NoError(t, os.WriteFile(notZip, []byte("id,name\n"), 0o600))

	db := storetest.OpenDB(t)
	imp := New(phases.New(db, nil))
	for _, c := range []struct {
		name  string
		spec  InspectSpec
		usage bool
		want  string
	}{
		{"UnknownSource", InspectSpec{Source: "zoho", Input: dir}, true, `unknown profile "zoho": no built-in profile is named like --source zoho`},
		{"UnknownProfile", InspectSpec{Source: "canonical", Profile: "zoho", Input: dir}, true, `unknown profile "zoho" (built-in: canonical, hubspot, pipedrive, salesforce`},
		{"MissingProfileFile", InspectSpec{Source: "zoho", Profile: filepath.Join(dir, "zoho.yaml"), Input: dir}, true, "zoho.yaml: no such file"},
		{"UnknownEncoding", InspectSpec{Source: "canonical", Input: dir, Encoding: "klingon"}, true, `--encoding klingon: unknown encoding "klingon"`},
		{"NoSuchPath", InspectSpec{Source: "canonical", Input: filepath.Join(dir, "nope")}, false, "nope: no such file or folder"},
		{"NoFileMatches", InspectSpec{Source: "canonical", Input: other}, false, "no file matches a kind of the canonical profile"},
		{"NotAProfileFile", InspectSpec{Source: "canonical", Input: filepath.Join(other, "accounts.txt")}, false, "is not a file of the canonical profile"},
		{"NamedPipe", InspectSpec{Source: "canonical", Input: fifo}, false, "contacts.csv: is a named pipe (FIFO), not a file"},
		{"ZipBomb", InspectSpec{Source: "canonical", Input: zipBomb}, false, "refused as a possible zip bomb"},
		{"NotAZip", InspectSpec{Source: "canonical", Input: notZip}, false, "export.zip: cannot be read as a zip"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Inspect(context.Background(), c.spec)
			require.ErrorContains(t, err, c.want)
			_, planErr := imp.Plan(context.Background(), RunSpec{Tenant: "acme", Source: c.spec.Source, Profile: c.spec.Profile,
				Input: c.spec.Input, Encoding: c.spec.Encoding})
			require.Equal(t, planErr.Error(), err.Error(), "the error Plan refuses the run with")
			var ue *UsageError
			var ie *input.Error
			if c.usage {
				require.ErrorAs(t, err, &ue)
			} else {
				require.ErrorAs(t, err, &ie)
			}
		})
	}
	require.Equal(t, []string{"0"}, column(t, db, `SELECT count(*) FROM migrations`), "Plan refused every one")
}

// TestInspectWindows1252: a file without UTF-8 whose high bytes are
// Windows-1252 characters is read as Windows-1252, its evidence told, the
// run's warning with it, and its rows mapped decoded; --encoding wins, and
// says so.
func TestInspectWindows1252(t *testing.T) {
	t.Parallel()
	dir := export(t, map[string]string{"contacts.csv": "id,first_name,last_name\nc-1,Sin\xe9ad,O\x92Brien\n"})
	ins := inspectExport(t, InspectSpec{Source: "canonical", Input: dir})
	f := ins.Files[0]
	require.Equal(t, "windows-1252", f.Encoding)
	require.Equal(t, `it holds no UTF-8 sequence, and every byte above 0x7F in it is a Windows-1252 character (the first: 0xE9 "é", at byte offset 31)`,
		f.EncodingWhy)
	require.Len(t, ins.Warnings, 1)
	require.Contains(t, ins.Warnings[0], "contacts.csv was read as Windows-1252, not UTF-8")
	require.Equal(t, map[string]string{"id": "c-1", "first_name": "Sinéad", "last_name": "O’Brien"}, f.Rows[0].Fields)

	ins = inspectExport(t, InspectSpec{Source: "canonical", Input: dir, Encoding: "utf-8"})
	f = ins.Files[0]
	require.Equal(t, "utf-8", ins.Encoding)
	require.Equal(t, "utf-8", f.Encoding)
	require.Equal(t, "--encoding", f.EncodingWhy)
	require.Empty(t, ins.Warnings)
	require.Equal(t, RowFailed, f.Rows[0].Outcome)
	require.Contains(t, f.Rows[0].Reason, "not valid UTF-8")
}

// TestInspectAgreesWithPlan: on the fixtures of every source, Inspect
// plans what Plan plans — the same files, kinds, formats, encodings and
// fingerprints, the same side files and warnings — and the tasks open
// without a problem.
func TestInspectAgreesWithPlan(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ source, dir string }{
		{"canonical", "../fixtures/demo"}, {"salesforce", "../fixtures/salesforce"},
		{"hubspot", "../fixtures/hubspot"}, {"pipedrive", "../fixtures/pipedrive"},
	} {
		t.Run(c.source, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ins := inspectExport(t, InspectSpec{Source: c.source, Input: c.dir})
			db := storetest.OpenDB(t)
			run, err := New(phases.New(db, nil)).Plan(ctx, RunSpec{Tenant: "acme", Source: c.source, Input: c.dir})
			require.NoError(t, err)
			tasks, err := phases.LoadTasks(ctx, db, run.ID)
			require.NoError(t, err)
			opts, err := runopts.Decode(run)
			require.NoError(t, err)

			var planned, inspected []string
			for _, task := range tasks {
				planned = append(planned, task.File+" "+string(task.Kind)+" "+task.Format+" "+task.Encoding+" "+task.Fingerprint)
			}
			for _, f := range ins.Files {
				inspected = append(inspected, f.File+" "+string(f.Kind)+" "+string(f.Format)+" "+f.Encoding+" "+f.Fingerprint)
				require.Empty(t, f.Problem, f.Name)
				require.NotEmpty(t, f.Rows, f.Name)
				require.NotEmpty(t, f.Columns, f.Name)
			}
			sort.Strings(planned)
			sort.Strings(inspected)
			require.NotEmpty(t, planned)
			require.Equal(t, planned, inspected)
			require.Equal(t, opts.Input, ins.Inputs[0])
			require.Equal(t, len(opts.SideFiles), len(ins.SideFiles))
			if len(opts.SideFiles) > 0 {
				require.Equal(t, opts.SideFiles, ins.SideFiles)
			}
			require.Equal(t, len(opts.Warnings), len(ins.Warnings))
			if len(opts.Warnings) > 0 {
				require.Equal(t, opts.Warnings, ins.Warnings)
			}
			require.Empty(t, ins.Problems)
		})
	}
}

// TestInspectProfileDescribesItsColumns: alternates, links by id prefix, a
// joined file, the rows a where keeps, and JSON keys flattened as the
// mapper flattens them — from the profiles of the fixtures.
func TestInspectProfileDescribesItsColumns(t *testing.T) {
	t.Parallel()
	sf := inspectExport(t, InspectSpec{Source: "salesforce", Input: "../fixtures/salesforce"})
	columns := func(f FileInspection) map[string]profile.Column {
		out := map[string]profile.Column{}
		for _, c := range f.Columns {
			out[c.Name] = c
		}
		return out
	}
	contact := columns(fileOf(t, sf, "Contact.csv"))
	require.Equal(t, profile.Column{Name: "MobilePhone", Field: "phone", Alternate: 2, Alternates: 2}, contact["MobilePhone"])

	task := fileOf(t, sf, "Task.csv")
	who := columns(task)["WhoId"]
	require.Equal(t, "", who.Field, "by prefix: the field depends on the value")
	require.Equal(t, []profile.Prefix{{Prefix: "003", Kind: ledger.Contact}, {Prefix: "00Q", Kind: ledger.Lead}}, who.Link.Prefixes)
	require.Equal(t, "WhoId", task.Rows[1].Links[0].Column)
	require.Equal(t, "lead_id", task.Rows[1].Links[0].Field, "a lead (00Q) is a link to the lead")

	opp := fileOf(t, sf, "Opportunity.csv")
	require.Equal(t, "opportunitycontactrole.csv", opp.Links[len(opp.Links)-1].Join)
	require.Len(t, opp.SideFiles, 1)
	require.Equal(t, "join:opportunitycontactrole.csv", opp.SideFiles[0].Role)
	require.NotEmpty(t, opp.Rows[0].Links, "the joined file's contact role, read as the task reads it")

	cv := columns(fileOf(t, sf, "ContentVersion.csv"))
	require.Equal(t, []string{"SNOTE"}, cv["FileType"].Where)
	require.Equal(t, RowExcluded, fileOf(t, sf, "ContentVersion.csv").Rows[1].Outcome)

	hs := inspectExport(t, InspectSpec{Source: "hubspot", Input: "../fixtures/hubspot"})
	api := columns(fileOf(t, hs, "contacts-api-2024-08-27.json"))
	require.Equal(t, "email", api["properties.email"].Field, "a JSON object's keys, flattened")
	require.Equal(t, "json", api["associations.companies.results"].Link.List)
}
