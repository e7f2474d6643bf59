package importer

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/failpoint"
	"crmimport/importer/input"
	"crmimport/importer/input/inputtest"
	"crmimport/importer/profile"
	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store/storetest"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, err := zw.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return b.Bytes()
}

// TestGzipInput: a .gz file of a profile's file is read through gzip and
// fingerprinted by its compressed bytes.
func TestGzipInput(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "companies.csv.gz"), gzipped(t, "id,name\nco1,Acme\nco2,Globex\n"), 0o600))
	run := importDir(t, New(phases.New(db, nil)), dir, 10)
	require.Equal(t, phases.RunSucceeded, run.Status)
	require.Equal(t, phases.Counts{Imported: 2}, run.Stats[ledger.Company])
	var file, format, fp string
	require.NoError(t, db.QueryRow(`SELECT file, format, fingerprint FROM migration_tasks`).Scan(&file, &format, &fp))
	require.Equal(t, filepath.Join(dir, "companies.csv.gz"), file)
	require.Equal(t, "csv", format)
	require.Regexp(t, `^crc32c:[0-9a-f]{8}:\d+$`, fp)
}

// TestGzipBomb: a gzip that uncompresses to more than the ratio allows is
// refused while it is planned, before any run exists.
func TestGzipBomb(t *testing.T) {
	t.Parallel()
	db := storetest.OpenDB(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "companies.csv.gz"),
		gzipped(t, "id,name\n"+string(bytes.Repeat([]byte("x"), 8<<20))), 0o600))
	imp := New(phases.New(db, nil))
	_, err := imp.Plan(context.Background(), RunSpec{Tenant: "acme", Source: "canonical", Input: dir})
	var ie *input.Error
	require.ErrorAs(t, err, &ie)
	require.Contains(t, err.Error(), "companies.csv.gz: uncompresses to more than")
	require.Contains(t, err.Error(), "refused as a possible gzip bomb")

	imp.limits = input.Limits{Entry: 1 << 20, Total: 1 << 30, Ratio: 1 << 30}
	_, err = imp.Plan(context.Background(), RunSpec{Tenant: "acme", Source: "canonical", Input: dir})
	require.ErrorContains(t, err, "uncompresses to more than 1.0 MiB, the limit for one file")
}

// TestZipLimits: the total and per-entry limits are checked against what
// the zip's directory says, before anything is uncompressed.
func TestZipLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	z := filepath.Join(dir, "export.zip")
	var big bytes.Buffer
	big.WriteString("id,name\n")
	for i := 0; big.Len() < 2<<20; i++ {
		fmt.Fprintf(&big, "co%d,%x\n", i, uint64(i)*0x9E3779B97F4A7C15) // compresses a few times, as text does
	}
	inputtest.WriteZip(t, z, [2]string{"companies.csv", big.String()}, [2]string{"contacts.csv", "id,email\n"})
	db := storetest.OpenDB(t)
	for _, c := range []struct {
		lim  input.Limits
		want string
	}{
		{input.Limits{Entry: 1 << 30, Total: 1 << 20, Ratio: 1000}, "export.zip: its entries would uncompress to more than 1.0 MiB (the limit for one zip)"},
		{input.Limits{Entry: 1 << 20, Total: 1 << 30, Ratio: 1000}, "export.zip!/companies.csv: uncompresses to 2.0 MiB, more than the limit of 1.0 MiB for one entry"},
		{input.Limits{Entry: 1 << 30, Total: 1 << 30, Ratio: 1}, "over the limit of 1:1): refused as a possible zip bomb"},
	} {
		imp := New(phases.New(db, nil))
		imp.limits = c.lim
		_, err := imp.Plan(context.Background(), RunSpec{Tenant: "acme", Source: "canonical", Input: z})
		var ie *input.Error
		require.ErrorAs(t, err, &ie)
		require.ErrorContains(t, err, c.want)
	}
	_, err := New(phases.New(db, nil)).Plan(context.Background(), RunSpec{Tenant: "acme", Source: "canonical", Input: z})
	require.NoError(t, err, "within the default limits")
}

// TestZipEntriesResume: a run over a zip's entries fails midway, resumes
// at its checkpoint (the entries checked by the zip's own CRC-32 and size),
// and ends as an uninterrupted run; a zip whose entry changed since is
// refused.
func TestZipEntriesResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	z := filepath.Join(dir, "export.zip")
	contacts := "id,first_name,company_id\nc1,Ann,co1\nc2,Bob,co2\nc3,Cy,co1\nc4,Di,co2\n"
	inputtest.WriteZip(t, z, [2]string{"export/companies.csv", "id,name\nco1,Acme\nco2,Globex\n"}, [2]string{"export/contacts.csv", contacts})
	db := storetest.OpenDB(t)
	fps, err := failpoint.Parse("batch:contact:2=error", canon.ParseKind)
	require.NoError(t, err)
	imp := New(phases.New(db, fps))
	ctx := context.Background()
	run, err := imp.Plan(ctx, RunSpec{Tenant: "acme", Source: "canonical", Input: z, BatchSize: 2})
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunPartial, run.Status)
	tasks, err := phases.LoadTasks(ctx, db, run.ID)
	require.NoError(t, err)
	require.Equal(t, z+"!/export/contacts.csv", tasks[1].File, "the one top folder is the zip's root")
	require.Regexp(t, `^zip:crc32:[0-9a-f]{8}:67$`, tasks[1].Fingerprint)
	require.Equal(t, int64(2), tasks[1].Checkpoint.Rows)

	imp = New(phases.New(db, nil))
	_, _, err = imp.Resume(ctx, run.ID)
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunSucceeded, run.Status)
	require.Equal(t, phases.Counts{Imported: 4}, run.Stats[ledger.Contact])

	// The same zip with a changed entry: a resume is refused.
	fps, err = failpoint.Parse("batch:contact:1=error", canon.ParseKind)
	require.NoError(t, err)
	imp = New(phases.New(db, fps))
	run, err = imp.Plan(ctx, RunSpec{Tenant: "other", Source: "canonical", Input: z, BatchSize: 2})
	require.NoError(t, err)
	_, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	inputtest.WriteZip(t, z, [2]string{"export/companies.csv", "id,name\nco1,Acme\nco2,Globex\n"}, [2]string{"export/contacts.csv", contacts + "c5,Ed,co1\n"})
	_, _, err = New(phases.New(db, nil)).Resume(ctx, run.ID)
	var changed *phases.ChangedInputError
	require.ErrorAs(t, err, &changed)
	require.Contains(t, err.Error(), "export.zip!/export/contacts.csv")
	require.Contains(t, err.Error(), "has changed")
}

// TestResumeChecksAuxiliaryFiles: a file that tasks read beside their own
// (here Salesforce's OpportunityContactRole.csv, joined to each deal) is
// fingerprinted with the plan; a resume after it changed is refused.
func TestResumeChecksAuxiliaryFiles(t *testing.T) {
	t.Parallel()
	dir := export(t, map[string]string{
		"Account.csv":                `"Id","Name"` + "\n" + `"001000000000001AAA","Acme"` + "\n",
		"Opportunity.csv":            `"Id","Name","AccountId"` + "\n" + `"006000000000001AAA","Rockets","001000000000001AAA"` + "\n",
		"OpportunityContactRole.csv": `"Id","OpportunityId","ContactId","IsPrimary"` + "\n",
	})
	db := storetest.OpenDB(t)
	fps, err := failpoint.Parse("batch:deal:1=error", canon.ParseKind)
	require.NoError(t, err)
	ctx := context.Background()
	imp := New(phases.New(db, fps))
	run, err := imp.Plan(ctx, RunSpec{Tenant: "acme", Source: "salesforce", Input: dir})
	require.NoError(t, err)
	opts, err := runopts.Decode(run)
	require.NoError(t, err)
	require.Equal(t, []profile.SideFile{{Role: "join:opportunitycontactrole.csv", File: filepath.Join(dir, "OpportunityContactRole.csv"),
		Format: "csv", Encoding: "utf-8", Fingerprint: opts.SideFiles[0].Fingerprint}}, opts.SideFiles)
	_, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "OpportunityContactRole.csv"),
		[]byte(`"Id","OpportunityId","ContactId","IsPrimary"`+"\n"+`"00K000000000001AAA","006000000000001AAA","003000000000001AAA","1"`+"\n"), 0o600))
	_, _, err = New(phases.New(db, nil)).Resume(ctx, run.ID)
	var changed *phases.ChangedInputError
	require.True(t, errors.As(err, &changed), "%v", err)
	require.Contains(t, err.Error(), "OpportunityContactRole.csv has changed")
}

// TestNestedArchivesAndFolders: an archive inside a zip is refused, naming
// it; a zip's other folders are not read, and said so.
func TestNestedArchivesAndFolders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	z := filepath.Join(dir, "export.zip")
	inputtest.WriteZip(t, z, [2]string{"companies.csv", "id,name\nco1,Acme\n"}, [2]string{"contacts.csv.gz", "x"})
	_, err := discover(context.Background(), []string{z}, profile.Canonical(), nil, "", input.DefaultLimits())
	require.ErrorContains(t, err, "holds 1 archive inside an archive (export.zip!/contacts.csv.gz)")

	inputtest.WriteZip(t, z, [2]string{"companies.csv", "id,name\nco1,Acme\n"}, [2]string{"Attachments/00P000000000001", "%PDF"},
		[2]string{"Attachments/inner.zip", "PK"}, [2]string{"__MACOSX/._companies.csv", "x"})
	d, err := discover(context.Background(), []string{z}, profile.Canonical(), nil, "", input.DefaultLimits())
	files, notices := d.files, d.notes
	require.NoError(t, err)
	require.Len(t, files, 1)
	require.Contains(t, notices.notices, "ignored the folders export.zip!/Attachments, export.zip!/__MACOSX: an export's files are read from its top folder")
}

// TestZipTwoEntriesOfOneName: a zip holding two entries of one name among
// those a run reads is refused before the run exists (exit 1, no run row),
// naming the entry: reading either would leave the other's records
// nowhere. Backslashes count as slashes. A zip that gained a second entry
// of a planned name since is refused by resume (R10).
func TestZipTwoEntriesOfOneName(t *testing.T) {
	t.Parallel()
	companies := inputtest.RawEntry{Name: "companies.csv", Data: "id,name\nco1,Acme\n"}
	first := "id,first_name\nc1,Ann\nc2,Bob\n"
	second := "id,first_name\nc3,Cy\nc4,Di\n"
	sfContact := `"Id","FirstName","LastName"` + "\n" + `"0035g00000Ab001AAB","Hannah","Okafor"` + "\n"
	for name, c := range map[string]struct {
		source  string
		entries []inputtest.RawEntry
		want    string
	}{
		"AtTheTop": {entries: []inputtest.RawEntry{companies, {Name: "contacts.csv", Data: first}, {Name: "contacts.csv", Data: second}},
			want: `export.zip: the zip holds two entries named "contacts.csv" (entries 2 and 3 of 3), and crmimport cannot tell which one is the export's: ` +
				"extract the zip, keep the right file, and pass the folder"},
		"InTheExportFolder": {entries: []inputtest.RawEntry{{Name: "export/companies.csv", Data: companies.Data},
			{Name: "export/contacts.csv", Data: first}, {Name: "export/notes.csv", Data: "id,body\n"}, {Name: "export/contacts.csv", Data: second}},
			want: `the zip holds two entries named "export/contacts.csv" (entries 2 and 4 of 4)`},
		"OneWithBackslashes": {entries: []inputtest.RawEntry{{Name: `export\companies.csv`, Data: companies.Data}, {Name: `export\contacts.csv`, Data: first}, {Name: "export/contacts.csv", Data: second}},
			want: `the zip holds two entries named "export\\contacts.csv" and "export/contacts.csv" (entries 2 and 3 of 3)`},
		"ABodyFile": {source: "salesforce", entries: []inputtest.RawEntry{{Name: "Contact.csv", Data: sfContact},
			{Name: "ContentVersion.csv", Data: `"Id","FileType"` + "\n"},
			{Name: "ContentVersion/0685g00000Cv001AAB", Data: "<p>one</p>"}, {Name: "ContentVersion/0685g00000Cv001AAB", Data: "<p>two</p>"}},
			want: `the zip holds two entries named "ContentVersion/0685g00000Cv001AAB" (entries 3 and 4 of 4)`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			z := filepath.Join(t.TempDir(), "export.zip")
			inputtest.WriteRawZip(t, z, c.entries...)
			db := storetest.OpenDB(t)
			source := c.source
			if source == "" {
				source = "canonical"
			}
			_, err := New(phases.New(db, nil)).Plan(context.Background(), RunSpec{Tenant: "acme", Source: source, Input: z})
			var ie *input.Error
			require.ErrorAs(t, err, &ie)
			require.Equal(t, z, ie.Path)
			require.ErrorContains(t, err, c.want)
			var runs int
			require.NoError(t, db.QueryRow(`SELECT count(*) FROM migrations`).Scan(&runs))
			require.Zero(t, runs, "no run row")
		})
	}

	t.Run("AddedSinceThePlan", func(t *testing.T) {
		t.Parallel()
		z := filepath.Join(t.TempDir(), "export.zip")
		inputtest.WriteRawZip(t, z, companies, inputtest.RawEntry{Name: "contacts.csv", Data: first})
		db := storetest.OpenDB(t)
		fps, err := failpoint.Parse("batch:contact:1=error", canon.ParseKind)
		require.NoError(t, err)
		ctx := context.Background()
		imp := New(phases.New(db, fps))
		run, err := imp.Plan(ctx, RunSpec{Tenant: "acme", Source: "canonical", Input: z})
		require.NoError(t, err)
		run, err = imp.Execute(ctx, run.ID)
		require.NoError(t, err)
		require.Equal(t, phases.RunPartial, run.Status)
		// The same first entry, and a second of its name: its fingerprint
		// still matches, but the second's records would be read by nobody.
		inputtest.WriteRawZip(t, z, companies, inputtest.RawEntry{Name: "contacts.csv", Data: first}, inputtest.RawEntry{Name: "contacts.csv", Data: second})
		_, _, err = New(phases.New(db, nil)).Resume(ctx, run.ID)
		var changed *phases.ChangedInputError
		require.ErrorAs(t, err, &changed)
		require.ErrorContains(t, err, `export.zip!/contacts.csv: the zip holds two entries named "contacts.csv"`)
	})
}

// TestZipBackslashNames: entry names written with backslashes (older
// Windows tools) are read with backslashes as folder separators: an export
// zipped with its folder is read from inside it, its tasks name the
// entries with slashes, and resume finds them again; a "..\" name is what a
// "../" name is, a folder that is not read.
func TestZipBackslashNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	z := filepath.Join(dir, "export.zip")
	contacts := "id,first_name,company_id\nc1,Ann,co1\nc2,Bob,co2\nc3,Cy,co1\n"
	inputtest.WriteRawZip(t, z, inputtest.RawEntry{Name: `export\companies.csv`, Data: "id,name\nco1,Acme\nco2,Globex\n"},
		inputtest.RawEntry{Name: `export\contacts.csv`, Data: contacts})
	db := storetest.OpenDB(t)
	fps, err := failpoint.Parse("batch:contact:2=error", canon.ParseKind)
	require.NoError(t, err)
	ctx := context.Background()
	imp := New(phases.New(db, fps))
	run, err := imp.Plan(ctx, RunSpec{Tenant: "acme", Source: "canonical", Input: z, BatchSize: 2})
	require.NoError(t, err)
	run, err = imp.Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunPartial, run.Status)
	tasks, err := phases.LoadTasks(ctx, db, run.ID)
	require.NoError(t, err)
	require.Equal(t, []string{z + "!/export/companies.csv", z + "!/export/contacts.csv"}, []string{tasks[0].File, tasks[1].File})
	require.Equal(t, int64(2), tasks[1].Checkpoint.Rows)
	_, _, err = New(phases.New(db, nil)).Resume(ctx, run.ID)
	require.NoError(t, err)
	run, err = New(phases.New(db, nil)).Execute(ctx, run.ID)
	require.NoError(t, err)
	require.Equal(t, phases.RunSucceeded, run.Status)
	require.Equal(t, phases.Counts{Imported: 2}, run.Stats[ledger.Company])
	require.Equal(t, phases.Counts{Imported: 3}, run.Stats[ledger.Contact])

	for _, sep := range []string{"/", `\`} {
		inputtest.WriteRawZip(t, z, inputtest.RawEntry{Name: "companies.csv", Data: "id,name\nco1,Acme\n"},
			inputtest.RawEntry{Name: ".." + sep + "contacts.csv", Data: contacts}, inputtest.RawEntry{Name: "export" + sep + ".." + sep + "deals.csv", Data: "id,name\n"})
		d, err := discover(context.Background(), []string{z}, profile.Canonical(), nil, "", input.DefaultLimits())
		files, notices := d.files, d.notes
		require.NoError(t, err, sep)
		require.Len(t, files, 1, sep)
		require.Equal(t, z+"!/companies.csv", files[0].Path, sep)
		require.Contains(t, notices.notices, "ignored the folders export.zip!/.., export.zip!/export: an export's files are read from its top folder", sep)
	}
}

// TestZipEncryptedEntry: an encrypted entry (a password-protected zip) is
// refused before the run exists, naming the zip and the entry and saying
// to decrypt it first, instead of "zip: not a valid zip file" (an
// encrypted body file fails its record alone, saying the same: profile's
// TestEncryptedBodyFile).
func TestZipEncryptedEntry(t *testing.T) {
	t.Parallel()
	z := filepath.Join(t.TempDir(), "export.zip")
	inputtest.WriteRawZip(t, z, inputtest.RawEntry{Name: "companies.csv", Data: "id,name\nco1,Acme\n"},
		inputtest.RawEntry{Name: "contacts.csv", Data: "id,first_name\nc1,Ann\n", Encrypted: true})
	db := storetest.OpenDB(t)
	_, err := New(phases.New(db, nil)).Plan(context.Background(), RunSpec{Tenant: "acme", Source: "canonical", Input: z})
	var ie *input.Error
	require.ErrorAs(t, err, &ie)
	require.ErrorContains(t, err, "export.zip!/contacts.csv: is encrypted (the zip is password-protected), and crmimport cannot decrypt it: "+
		"extract the zip with its password and pass the folder, or zip the files again without one")
	require.NotContains(t, err.Error(), "not a valid zip file")
}
