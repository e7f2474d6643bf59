package desktop

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/profile"
	"crmimport/importer/reader/readertest"
	"crmimport/importer/suggest"
	"crmimport/store/storetest"
)

// zohoExport is an export of a CRM no built-in profile reads (Zoho's
// names: Record Id, Account Name, Designation), with a header name no
// profile spells (Designation is a contact's job title) and a column
// whose name is markup.
func zohoExport(t *testing.T) string {
	return writeFiles(t, map[string]string{
		"Accounts_2024_08_27.csv": "Record Id,Account Name,Website,Industry,Created Time\n" +
			"3652397000000624046,Brightwater Bakery,brightwater-bakery.example.com,Food,2021-03-04 08:00:00\n",
		"Contacts_2024_08_27.csv": "Record Id,First Name,Last Name,Email,Designation,Account Id,Created Time,<b>Remark</b>\n" +
			"3652397000000624101,Hannah,Okafor,hannah.okafor@brightwater-bakery.example.com,Head of Sales,3652397000000624046,2022-03-14 10:00:00,<img src=x>\n" +
			"3652397000000624102,Grace,Lindqvist,grace@brightwater-bakery.example.com,Baker,3652397000000624046,2023-01-19 16:45:00,\n",
	})
}

// editorServer is a server on a fresh database at addr, not listening.
func editorServer(t *testing.T, addr string) *Server {
	t.Helper()
	s, err := New(context.Background(), Config{DBPath: addr, Folder: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	return s
}

func fileOf(t *testing.T, d *suggest.Draft, name string) *suggest.File {
	t.Helper()
	for _, f := range d.Files {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("the draft has no file %s", name)
	return nil
}

func columnOf(t *testing.T, f *suggest.File, name string) *suggest.Column {
	t.Helper()
	for _, c := range f.Columns {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("%s has no column %s", f.Name, name)
	return nil
}

type previewDoc struct {
	suggest.Mapped
	Check []string `json:"check"`
	Error string   `json:"error"`
}

// TestSuggestPreviewSave: the editor's API (SPEC §9, Profiles). Suggest
// drafts a kind per file and a field per column; a preview maps the first
// rows with the draft, as a run would; a column given another field maps
// its values there after the change; a field given twice is what Check
// refuses, in the preview and on save; a save writes the profile 0600 in
// a 0700 folder beside the database, which the loader reads, refuses to
// replace it unless told, and answers New import prefilled with it.
func TestSuggestPreviewSave(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := editorServer(t, addr)
		dir := zohoExport(t)

		w := s.post(t, "/api/profiles/suggest", map[string]any{"paths": []string{dir}, "name": "zoho"})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		d := decode[suggest.Draft](t, w)
		require.Equal(t, "zoho", d.Name)
		require.Len(t, d.Files, 2)
		contacts := fileOf(t, &d, "Contacts_2024_08_27.csv")
		require.EqualValues(t, "contact", contacts.Kind)
		require.Equal(t, "id", columnOf(t, contacts, "Record Id").Field)
		designation := columnOf(t, contacts, "Designation")
		require.NotEqual(t, "title", designation.Field, "the premise: no profile spells Designation, so the suggestion does not place it")

		preview := func(d *suggest.Draft) (int, previewDoc) {
			w := s.post(t, "/api/profiles/preview", map[string]any{"draft": d, "ref": contacts.Ref, "rows": 5})
			return w.Code, decode[previewDoc](t, w)
		}
		code, p := preview(&d)
		require.Equal(t, http.StatusOK, code, p.Error)
		require.Empty(t, p.Check)
		require.Empty(t, p.Problem)
		require.Len(t, p.Rows, 2)
		require.Equal(t, "3652397000000624101", p.Rows[0].ID)
		require.Equal(t, 2, p.Rows[0].Line)
		require.Empty(t, p.Rows[0].Fields["title"])
		require.Equal(t, "Head of Sales", p.Rows[0].Extra["Designation"])
		require.Equal(t, "<img src=x>", p.Rows[0].Extra["<b>Remark</b>"], "kept as it is, in extra")
		require.Empty(t, p.Rows[0].Error)

		// The change the editor makes: Designation gives title.
		designation.Field, designation.Why, designation.Sure = "title", "chosen in the editor", suggest.Sure
		code, p = preview(&d)
		require.Equal(t, http.StatusOK, code, p.Error)
		require.Empty(t, p.Check)
		require.Equal(t, "Head of Sales", p.Rows[0].Fields["title"])
		require.Equal(t, "Baker", p.Rows[1].Fields["title"])
		require.NotContains(t, p.Rows[0].Extra, "Designation")

		// A field given twice: Check says so, in the preview and on save.
		last := columnOf(t, contacts, "Last Name")
		last.Field = "first_name"
		code, p = preview(&d)
		require.NotEmpty(t, p.Check, "code %d: %+v", code, p)
		w = s.post(t, "/api/profiles/save", map[string]any{"draft": &d, "file": "broken.yaml"})
		require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
		require.Contains(t, w.Body.String(), "the profile is not saved")
		_, err := os.Stat(filepath.Join(private(s, profilesFolder), "broken.yaml"))
		require.ErrorIs(t, err, os.ErrNotExist, "a draft Check refuses is not written")
		last.Field = "last_name"

		// A file left out has no rows to show.
		accounts := fileOf(t, &d, "Accounts_2024_08_27.csv")
		kind := accounts.Kind
		accounts.Kind = ""
		w = s.post(t, "/api/profiles/preview", map[string]any{"draft": &d, "ref": accounts.Ref})
		require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
		require.Contains(t, w.Body.String(), "left out")
		accounts.Kind = kind

		// Saved beside the database, 0600 in a 0700 folder.
		w = s.post(t, "/api/profiles/save", map[string]any{"draft": &d, "file": "zoho.yaml", "export": dir})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		saved := decode[struct {
			File      string `json:"file"`
			Profile   string `json:"profile"`
			ImportURL string `json:"import_url"`
		}](t, w)
		require.Equal(t, filepath.Join(private(s, profilesFolder), "zoho.yaml"), saved.File)
		st, err := os.Stat(saved.File)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
		st, err = os.Stat(filepath.Dir(saved.File))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
		text, err := os.ReadFile(saved.File)
		require.NoError(t, err)
		prof, err := profile.Load("zoho.yaml", text)
		require.NoError(t, err, "the loader reads what was saved")
		require.Equal(t, "zoho", prof.Name)
		u, err := url.Parse(saved.ImportURL)
		require.NoError(t, err)
		require.Equal(t, "/import", u.Path)
		require.Equal(t, saved.File, u.Query().Get("profile"))
		require.Equal(t, dir, u.Query().Get("path"))
		require.Equal(t, "zoho", u.Query().Get("source"))

		// The New import page takes it as a profile file.
		page := s.do(t, req{http.MethodGet, saved.ImportURL, s.addr, nil, true})
		require.Equal(t, http.StatusOK, page.Code)
		require.Contains(t, page.Body.String(), `name="profile_file" type="text" value="`+saved.File+`"`)

		// Not replaced unless told.
		designation.Field = ""
		w = s.post(t, "/api/profiles/save", map[string]any{"draft": &d, "file": "zoho.yaml"})
		require.Equal(t, http.StatusConflict, w.Code, w.Body.String())
		require.Contains(t, w.Body.String(), "exists")
		again, err := os.ReadFile(saved.File)
		require.NoError(t, err)
		require.Equal(t, string(text), string(again), "the file is as it was")
		require.NoError(t, os.Chmod(saved.File, 0o644))
		w = s.post(t, "/api/profiles/save", map[string]any{"draft": &d, "file": "zoho.yaml", "overwrite": true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		again, err = os.ReadFile(saved.File)
		require.NoError(t, err)
		require.NotEqual(t, string(text), string(again), "replaced when told")
		st, err = os.Stat(saved.File)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "a replaced file is made 0600 again")

		// A file name that climbs out of the folder is refused.
		w = s.post(t, "/api/profiles/save", map[string]any{"draft": &d, "file": "../zoho.yaml"})
		require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
	})
}

// TestEditorRoutesAreGuarded: the editor's POSTs go through the guard
// like every change — without X-Requested-By, or from another site, they
// are refused before anything is read.
func TestEditorRoutesAreGuarded(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := editorServer(t, addr)
		dir := zohoExport(t)
		for _, p := range []string{"/api/profiles/suggest", "/api/profiles/preview", "/api/profiles/save"} {
			for name, h := range map[string]map[string]string{
				"NoRequestedBy": {},
				"CrossSite":     {RequestedBy: "crmimport", "Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
			} {
				r := req{http.MethodPost, p, s.addr, h, true}
				w := s.do(t, r)
				require.Equal(t, http.StatusForbidden, w.Code, "%s %s: %s", p, name, w.Body.String())
			}
		}
		w := s.post(t, "/api/profiles/suggest", map[string]any{"paths": []string{dir}})
		require.Equal(t, http.StatusOK, w.Code, "the same request with the header: %s", w.Body.String())
		_, err := os.Stat(private(s, profilesFolder))
		require.ErrorIs(t, err, os.ErrNotExist, "nothing written by a refused save")
	})
}

// TestEditorPageEscapes: the editor page and the Profiles page's entry.
func TestEditorPageEscapes(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := editorServer(t, addr)
		w := s.do(t, req{http.MethodGet, "/profiles", s.addr, nil, true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		require.Contains(t, w.Body.String(), `href="/profiles/new"`)
		w = s.do(t, req{http.MethodGet, "/profiles/new?path=" + url.QueryEscape(`/tmp/"><script>x</script>`), s.addr, nil, true})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		body := w.Body.String()
		require.NotContains(t, body, "<script>x")
		require.Contains(t, body, `<script src="/static/editor.js" defer></script>`)
		require.Equal(t, 2, strings.Count(body, "<script"), "no inline script: editor.js and app.js")
	})
}

// TestPreviewOfAWorkbookSheet: issue 26 item 5. A workbook whose sheets
// hold different kinds is a draft file per sheet, one ref; the preview
// request names the sheet, and the answer is that sheet's rows (it was
// the first sheet's, whichever file of the workbook was asked). The page
// says which links do not resolve, and what a run makes of each row.
func TestPreviewOfAWorkbookSheet(t *testing.T) {
	t.Parallel()
	s := editorServer(t, filepath.Join(t.TempDir(), "crm.db"))
	book := filepath.Join(t.TempDir(), "crm.xlsx")
	cell := func(ref, v string) string { return `<c r="` + ref + `" t="inlineStr"><is><t>` + v + `</t></is></c>` }
	row := func(n string, vals ...string) string {
		out := `<row r="` + n + `">`
		for i, v := range vals {
			out += cell(string(rune('A'+i))+n, v)
		}
		return out + `</row>`
	}
	wb := readertest.Workbook{Sheets: []readertest.Sheet{
		{Name: "Companies", Rows: row("1", "Company ID", "Company name", "Website", "Industry") +
			row("2", "1", "Brightwater Bakery", "brightwater-bakery.example.com", "Food") +
			row("3", "2", "Harbor Logistics", "harbor-logistics.example.com", "Transport")},
		{Name: "People", Rows: row("1", "Contact ID", "First name", "Last name", "Email", "Company ID") +
			row("2", "11", "Hannah", "Okafor", "hannah@brightwater-bakery.example.com", "1") +
			row("3", "12", "Grace", "Lindqvist", "grace@harbor-logistics.example.com", "9")},
	}}
	require.NoError(t, wb.WriteFile(book))
	w := s.post(t, "/api/profiles/suggest", map[string]any{"paths": []string{book}, "name": "book"})
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	d := decode[suggest.Draft](t, w)
	require.Len(t, d.Files, 2)
	sheets := map[string]string{}
	for _, f := range d.Files {
		require.Equal(t, book, f.Ref, "one ref, the workbook")
		sheets[f.Sheet] = string(f.Kind)
	}
	require.Equal(t, map[string]string{"Companies": "company", "People": "contact"}, sheets)

	w = s.post(t, "/api/profiles/preview", map[string]any{"draft": &d, "ref": book, "sheet": "People", "rows": 5})
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	p := decode[previewDoc](t, w)
	require.Equal(t, "People", p.Sheet)
	require.Equal(t, "contact", p.Kind)
	require.Len(t, p.Rows, 2)
	require.Equal(t, "Okafor", p.Rows[0].Fields["last_name"], "the People sheet's rows")
	require.Equal(t, suggest.RowImported, p.Rows[1].Outcome)
	require.Equal(t, []suggest.MappedLink{{Field: "company_id", Value: "9"}}, p.Rows[1].Unlinked, "no company 9 in the workbook")
	require.Equal(t, 2, p.Imported)

	w = s.post(t, "/api/profiles/preview", map[string]any{"draft": &d, "ref": book, "sheet": "Companies", "rows": 5})
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	p = decode[previewDoc](t, w)
	require.Equal(t, "Brightwater Bakery", p.Rows[0].Fields["name"])

	w = s.post(t, "/api/profiles/preview", map[string]any{"draft": &d, "ref": book, "sheet": "Deals"})
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.Contains(t, w.Body.String(), `the draft has no sheet \"Deals\"`)
}
