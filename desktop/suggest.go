package desktop

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"crmimport/canon"
	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/suggest"
	"crmimport/ledger"
)

// The mapping editor (SPEC §9, Profiles): an export no profile fits is
// read by suggest.Suggest (a kind per file, a field per column, each guess
// with why and how sure), the user changes a file's kind or a column's
// field, the first rows are mapped again after every change by
// suggest.Preview — the draft written as a profile and read back by the
// loader, as `run --profile FILE` reads it — and the draft is saved as a
// profile file that the New import page takes.

// profilesFolder is the private folder where profiles saved by a bare
// file name go (privateFolder: beside the database, as the uploads'
// folder).
const profilesFolder = "profiles"

// maxDraft bounds a posted draft: an export of a few hundred columns with
// their samples is well within it.
const maxDraft = 8 << 20

// editorKind is one kind as the editor's lists offer it: its fields,
// which of them are links (to be read by id or by name), which dates (in a
// format), and the values of those that hold few (a deal's status: what
// a value map gives).
type editorKind struct {
	Kind   string              `json:"kind"`
	Plural string              `json:"plural"`
	Fields []string            `json:"fields"`
	Links  map[string]string   `json:"links"` // link field -> the parent's kind
	Dates  []string            `json:"dates"`
	Values map[string][]string `json:"values"`
}

func editorKinds() []editorKind {
	var out []editorKind
	for _, k := range canon.Kinds() {
		ek := editorKind{Kind: string(k), Plural: k.Plural(), Fields: canon.Fields(k), Links: map[string]string{}, Dates: []string{},
			Values: map[string][]string{}}
		for _, f := range ek.Fields {
			if parent, ok := canon.KindOfLinkField(f); ok {
				ek.Links[f] = string(parent)
			}
			if canon.IsDateField(f) {
				ek.Dates = append(ek.Dates, f)
			}
			if f == "status" && k == ledger.Deal {
				ek.Values[f] = canon.Statuses
			}
		}
		out = append(out, ek)
	}
	return out
}

// editorDateFormats are the date formats the editor offers for a date
// column beyond those the draft saw (profile spellings, SPEC §4).
var editorDateFormats = []string{"DD/MM/YYYY", "MM/DD/YYYY", "DD.MM.YYYY", "DD-MM-YYYY", "YYYY/MM/DD", "DD/MM/YYYY HH:mm",
	"MM/DD/YYYY hh:mm A", "DD.MM.YYYY HH:mm", "YYYY-MM-DD HH:mm:ss"}

// profileNewPage is the mapping editor; ?path= opens an export at once.
func (s *Server) profileNewPage(w http.ResponseWriter, r *http.Request) {
	kinds, err := json.Marshal(editorKinds())
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	formats, err := json.Marshal(editorDateFormats)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, "suggest", page{Title: "Suggest a profile", Nav: "profiles", Data: struct {
		Path, Kinds, DateFormats string
		Folder, Uploads          string
	}{r.URL.Query().Get("path"), string(kinds), string(formats), s.folderWords(profilesFolder), s.folderWords(uploadsFolder)}})
}

// suggestRequest is what POST /api/profiles/suggest takes: the paths of
// one export (a folder, a zip, files), and the draft's name.
type suggestRequest struct {
	Paths []string `json:"paths"`
	Name  string   `json:"name,omitempty"`
}

// apiSuggest drafts a profile for an export (suggest.Suggest): the Draft
// as JSON, which the editor changes and posts back.
func (s *Server) apiSuggest(w http.ResponseWriter, r *http.Request) {
	var q suggestRequest
	if err := readRequestUpTo(r, &q, 1<<20); err != nil {
		s.fail(w, err)
		return
	}
	paths, err := exportPaths(q.Paths)
	if err != nil {
		s.fail(w, err)
		return
	}
	for _, p := range paths {
		if err := input.Stat(p); err != nil {
			s.fail(w, badRequest("%v", err))
			return
		}
	}
	d, err := suggest.Suggest(r.Context(), paths, suggest.Options{Name: strings.TrimSpace(q.Name), Limits: input.DefaultLimits()})
	if err != nil {
		if r.Context().Err() == nil {
			err = badRequest("%v", err) // the export cannot be read as one: its files say why
		}
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// previewRequest is what POST /api/profiles/preview takes: the draft as
// the editor changed it, one of its files (its ref, and the sheet of a
// workbook whose sheets the draft reads one by one), and how many rows.
type previewRequest struct {
	Draft *suggest.Draft `json:"draft"`
	Ref   string         `json:"ref"`
	Sheet string         `json:"sheet,omitempty"`
	Rows  int            `json:"rows,omitempty"`
}

// previewAnswer is the first rows of the file as the draft maps them, and
// what Check finds wrong with the draft as a whole.
type previewAnswer struct {
	*suggest.Mapped
	Check []string `json:"check"`
}

// readDraft reads a request that posts a draft into q; false once it has
// answered one that cannot be read or holds no draft.
func (s *Server) readDraft(w http.ResponseWriter, r *http.Request, q any, draft func() *suggest.Draft) bool {
	if err := readRequestUpTo(r, q, maxDraft); err != nil {
		s.fail(w, err)
		return false
	}
	if draft() == nil {
		s.fail(w, badRequest("draft is missing: post the draft POST /api/profiles/suggest answered, as changed"))
		return false
	}
	return true
}

// apiPreview maps the first rows of one file of the draft
// (suggest.Preview), and says what Check finds wrong with the draft.
func (s *Server) apiPreview(w http.ResponseWriter, r *http.Request) {
	var q previewRequest
	if !s.readDraft(w, r, &q, func() *suggest.Draft { return q.Draft }) {
		return
	}
	if strings.TrimSpace(q.Ref) == "" {
		s.fail(w, badRequest("ref is empty: name one of the draft's files by its ref"))
		return
	}
	check := checkWords(q.Draft)
	m, err := suggest.Preview(r.Context(), q.Draft, q.Ref, q.Sheet, q.Rows, input.DefaultLimits())
	if err != nil {
		if r.Context().Err() != nil {
			s.fail(w, err)
			return
		}
		// A draft the loader refuses, a file left out: the page shows
		// why, with what Check finds.
		writeJSON(w, http.StatusBadRequest, struct {
			apiError
			Check []string `json:"check"`
		}{apiError{Error: err.Error(), ExitCode: 2}, check})
		return
	}
	writeJSON(w, http.StatusOK, previewAnswer{Mapped: m, Check: check})
}

// checkWords is what Check finds wrong with a draft, one line each
// (empty when nothing).
func checkWords(d *suggest.Draft) []string {
	out := []string{}
	if err := d.Check(); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				out = append(out, line)
			}
		}
	}
	return out
}

// saveRequest is what POST /api/profiles/save takes: the draft, the file
// to write it to (a bare name goes in the profiles' private folder), and whether an
// existing file of that name may be replaced.
type saveRequest struct {
	Draft     *suggest.Draft `json:"draft"`
	File      string         `json:"file"`
	Overwrite bool           `json:"overwrite,omitempty"`
	// Export is the path the draft was made of, for the New import page
	// the answer links to (default: the folder or zip of its files).
	Export string `json:"export,omitempty"`
}

// apiSave writes the draft as a profile file (its YAML, with every guess
// commented), 0600: refused when Check finds something wrong, when the
// loader would refuse it, or when the file exists and overwrite is not
// set (409). It answers where it wrote, and the New import page with the
// profile and the export.
func (s *Server) apiSave(w http.ResponseWriter, r *http.Request) {
	var q saveRequest
	if !s.readDraft(w, r, &q, func() *suggest.Draft { return q.Draft }) {
		return
	}
	if problems := checkWords(q.Draft); len(problems) > 0 {
		s.fail(w, badRequest("the profile is not saved: %s", strings.Join(problems, "; ")))
		return
	}
	text := q.Draft.YAML()
	p, err := profile.Load(filepath.Base(q.File), text)
	if err != nil {
		s.fail(w, badRequest("the profile is not saved: the loader refuses it: %v", err))
		return
	}
	file, err := s.profileFile(q.File, q.Draft.Name)
	if err != nil {
		s.fail(w, err)
		return
	}
	if err := writePrivate(file, text, q.Overwrite); err != nil {
		if errors.Is(err, fs.ErrExist) {
			writeJSON(w, http.StatusConflict, apiError{Error: fmt.Sprintf("%s exists: choose another name, or replace it (overwrite)", file), ExitCode: 6})
			return
		}
		s.fail(w, err)
		return
	}
	v := url.Values{"profile": {file}, "source": {p.Name}}
	if ex := cmp.Or(strings.TrimSpace(q.Export), draftExport(q.Draft)); ex != "" {
		v.Set("path", ex)
	}
	writeJSON(w, http.StatusOK, map[string]any{"file": file, "profile": p.Name, "import_url": "/import?" + v.Encode()})
}

// profileFile is where a profile named file is written: a bare name in
// the profiles' private folder (privateFolder), an absolute path as it is; a
// name without an extension gets .yaml.
func (s *Server) profileFile(file, draftName string) (string, error) {
	file = strings.TrimSpace(file)
	if file == "" {
		file = strings.TrimSpace(draftName)
	}
	if file == "" {
		return "", badRequest("file is empty: give the profile's file name, e.g. zoho.yaml")
	}
	switch strings.ToLower(filepath.Ext(file)) {
	case ".yaml", ".yml":
	case "":
		file += ".yaml"
	default:
		return "", badRequest("%s: a profile file is YAML: name it NAME.yaml", file)
	}
	if filepath.IsAbs(file) {
		return filepath.Clean(file), nil
	}
	if filepath.Base(file) != file || strings.HasPrefix(file, ".") {
		return "", badRequest("%s: give a file name (saved in %s) or a full path", file, s.folderWords(profilesFolder))
	}
	dir, err := s.privateFolder(profilesFolder)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, file), nil
}

// writePrivate writes a file 0600, refusing an existing one unless
// overwrite (then it is made 0600 too): a profile names a customer's
// columns.
func writePrivate(file string, text []byte, overwrite bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if overwrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(file, flags, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(file, 0o600)
	}
	if err != nil {
		return fmt.Errorf("save profile %s: %w", file, err)
	}
	return nil
}

// draftExport is the export the draft was made of: the folder or zip its
// files are in when they are all in one, else "".
func draftExport(d *suggest.Draft) string {
	var out string
	for i, f := range d.Files {
		where := f.Ref
		if zip, _, ok := strings.Cut(where, "!"); ok {
			where = zip
		} else {
			where = filepath.Dir(where)
		}
		if i > 0 && where != out {
			return ""
		}
		out = where
	}
	return out
}

// exportPaths are a request's paths of an export, trimmed, the empty ones
// left out; none is a bad request.
func exportPaths(given []string) ([]string, error) {
	var paths []string
	for _, p := range given {
		if p = strings.TrimSpace(p); p != "" {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return nil, badRequest("paths is empty: give the folder, zip or files of the export")
	}
	return paths, nil
}
