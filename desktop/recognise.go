package desktop

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"crmimport/importer/suggest"
	"crmimport/runs"
)

// New import knows the export (issue 27 item 4): once a path is chosen,
// the page asks which built-in profile reads it (suggest.Recognise, the
// evidence the mapping editor's drafts weigh) and proposes that profile
// and a source, saying why in a line; the user may change either. When
// none reads it, the page says so and offers the mapping editor.

// recogniseRequest is what POST /api/recognise takes: the paths of one
// export, and the tenant the import is for, if one is typed yet.
type recogniseRequest struct {
	Paths  []string `json:"paths"`
	Tenant string   `json:"tenant,omitempty"`
}

// recognition is what POST /api/recognise answers: suggest.Recognition,
// with the source proposed and why, and the mapping editor's address for
// the export when no profile reads it.
type recognition struct {
	*suggest.Recognition
	// Source is the source name proposed: the profile's, or the one the
	// tenant's earlier runs with that profile kept their records under
	// (R1: the ledger knows a record by its source; another name imports
	// it again), with SourceWhy saying which.
	Source    string `json:"source"`
	SourceWhy string `json:"source_why"`
	Editor    string `json:"editor,omitempty"`
}

// apiRecognise says which built-in profile reads an export. It reads the
// first rows of each file, as the mapping editor does, and writes nothing.
func (s *Server) apiRecognise(w http.ResponseWriter, r *http.Request) {
	var q recogniseRequest
	if err := readRequest(r, &q); err != nil {
		s.fail(w, err)
		return
	}
	paths, err := exportPaths(q.Paths)
	if err != nil {
		s.fail(w, err)
		return
	}
	rec, err := suggest.Recognise(r.Context(), paths, suggest.Options{})
	if err != nil {
		s.fail(w, err)
		return
	}
	out := recognition{Recognition: rec}
	if rec.Profile == "" {
		out.Editor = "/profiles/new?path=" + url.QueryEscape(paths[0])
		writeJSON(w, http.StatusOK, out)
		return
	}
	out.Source, out.SourceWhy, err = s.sourceFor(r, strings.TrimSpace(q.Tenant), rec.Profile)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// sourceFor is the source to propose for an import of tenant with the
// built-in profile prof: the source of the tenant's latest run with that
// profile, when it has one (its records are kept under it: another name
// would import them again), else the profile's name.
func (s *Server) sourceFor(r *http.Request, tenant, prof string) (string, string, error) {
	if tenant != "" {
		all, err := runs.ListRuns(r.Context(), s.ro, tenant)
		if err != nil {
			return "", "", err
		}
		for _, run := range all { // newest first
			if run.Undoes != 0 {
				continue
			}
			o, err := runs.OptionsOf(run)
			if err != nil || o.ProfileText != "" {
				continue // a run loaded from a dump, or a custom profile's
			}
			if o.Profile == prof {
				return run.Source, "the source of tenant " + tenant + "'s earlier runs with the " + prof + " profile (run " +
					strconv.FormatInt(run.ID, 10) + "): its records are kept under it", nil
			}
		}
	}
	return prof, "the profile's name", nil
}
