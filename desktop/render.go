package desktop

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"crmimport/report"
	"crmimport/runs"
)

// The templates: layout.tmpl and parts.tmpl with one page's file; the
// embedded ones are parsed once per page, a --assets folder's on every
// request (so that an edit shows on reload).
var (
	parsedMu sync.Mutex
	parsed   = map[string]*template.Template{}
)

var funcs = template.FuncMap{
	"count": func(n int64) string { return report.Count(n) },
	"duration": func(ms *int64) string {
		return report.Duration(ms)
	},
	"time": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"bar":  outcomeBar,
	"percent": func(p *float64) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprintf("%.0f%%", *p)
	},
	// value is a progress element's value: a percent, rounded.
	"value": func(p *float64) string { return fmt.Sprintf("%.0f", *p) },
	"plural": func(n int64, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	},
	"join":     strings.Join,
	"undoword": undoWord,
	"partly":   partlyLinks,
	// The records browser's words (browse.go).
	"title":      title,
	"fieldlabel": fieldLabel,
	"linklabel":  linkLabel,
	"records":    recordsPath,
	"kindcounts": func(r *report.Report, k report.Kind) kindCounts {
		return kindCounts{R: r, K: k}
	},
	// The tenant's page (tenants.go): what can be open, in its order, and
	// a tenant's page by name.
	"openwords":  func() []string { return openWords },
	"tenanthref": tenantPath,
}

// kindCounts is one kind of a run with its run, for the run page's
// countcells: which columns it shows depends on the run's totals.
type kindCounts struct {
	R *report.Report
	K report.Kind
}

// undoLink is what a run has to do with undo (R16), for the pages: "undone
// by" or "undo of" and the other run (a link, except in the static HTML
// report, which links to nothing).
type undoLink struct {
	Word   string
	Run    int64
	Static bool
}

func undoWord(r *report.Report, static bool) undoLink {
	switch {
	case r.Run.UndoneBy != 0:
		return undoLink{"undone by", r.Run.UndoneBy, static}
	case r.Run.Undoes != 0:
		return undoLink{"undo of", r.Run.Undoes, static}
	}
	return undoLink{}
}

// partlyLink is what one undo under --cascade took back of a run (R16),
// for the pages: the undo and the run it undid (links, except in the
// static HTML report), and the records per kind.
type partlyLink struct {
	report.Partly
	Static bool
}

func partlyLinks(r *report.Report, static bool) []partlyLink {
	var out []partlyLink
	for _, p := range r.Partly() {
		out = append(out, partlyLink{p, static})
	}
	return out
}

func (s *Server) template(page string) (*template.Template, error) {
	key := page
	if s.cfg.Assets == "" {
		parsedMu.Lock()
		defer parsedMu.Unlock()
		if t, ok := parsed[key]; ok {
			return t, nil
		}
	}
	t, err := parseTemplates(s.assets, page)
	if err != nil {
		return nil, err
	}
	if s.cfg.Assets == "" {
		parsed[key] = t
	}
	return t, nil
}

func parseTemplates(fsys fs.FS, page string) (*template.Template, error) {
	return template.New(page).Funcs(funcs).ParseFS(fsys, "templates/layout.tmpl", "templates/parts.tmpl", "templates/"+page+".tmpl")
}

// page is what every page's layout shows.
type page struct {
	Title  string
	Nav    string // the section the page belongs to
	DB     string
	Static bool         // the self-contained HTML report: no navigation, no script, the style inline
	Style  template.CSS // the inline style of a static page
	Data   any
}

// render writes a page; an error before the first byte is a 500 page.
func (s *Server) render(w http.ResponseWriter, name string, p page) {
	t, err := s.template(name)
	if err != nil {
		http.Error(w, "crmimport: template "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	p.DB = dbWords(s.cfg.DBPath)
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout", p); err != nil {
		http.Error(w, "crmimport: page "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.Copy(w, &b) // the client went away: nothing to tell it
}

// Segment is one outcome's part of a bar: its class (the outcome, which
// gives its colour), its count and its place on a 0–1000 scale.
type Segment struct {
	Outcome string
	Label   string
	Count   int64
	X, W    float64
	Fill    string
}

// Outcome colours: the four outcomes of SPEC §1, in their order, the same
// everywhere (the pages' CSS names them too).
var outcomes = []struct{ name, label, fill string }{
	{"imported", "imported", "#2e7d32"},
	{"unchanged", "unchanged", "#546e7a"},
	{"skipped", "skipped", "#b26a00"},
	{"failed", "failed", "#c62828"},
}

// outcomeBar cuts a bar of 1000 into the four outcomes of c, in order,
// each as wide as its share of the records.
func outcomeBar(c runs.Counts) []Segment {
	total := c.Total()
	counts := []int64{c.Imported, c.Unchanged, c.Skipped, c.Failed}
	var out []Segment
	x := 0.0
	for i, o := range outcomes {
		w := 0.0
		if total > 0 {
			w = 1000 * float64(counts[i]) / float64(total)
		}
		out = append(out, Segment{Outcome: o.name, Label: o.label, Count: counts[i], X: x, W: w, Fill: o.fill})
		x += w
	}
	return out
}
