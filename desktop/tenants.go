package desktop

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"crmimport/canon"
	"crmimport/forensics"
	"crmimport/ledger"
	"crmimport/report"
	"crmimport/runs"
)

// A customer's page (issue 27 item 3): a tenant's runs in order with what
// each did, what is still open across them as the tenant stands now
// (runs.TenantOf, ledger.Open), and the next action for each, as buttons
// that do it — doctor's repairs (forensics.Doctor, as the Ledger page
// shows them), Retry (R8), resume --from for a run loaded from a dump
// (R10), Apply these changes (R17, update.go). A button the engine would
// refuse now is disabled and says why in words on the page.

// tenantPath is a tenant's page; a tenant's name is text, escaped as a
// segment of the path (a tenant may hold a slash).
func tenantPath(tenant string) string { return "/tenants/" + url.PathEscape(tenant) }

// tenantsView is the list of tenants.
type tenantsView struct {
	Tenants []tenantLine
}

// tenantLine is one tenant of the list, with its latest run.
type tenantLine struct {
	runs.Tenant
	Href   string
	Latest *report.Report
}

func (s *Server) tenantsPage(w http.ResponseWriter, r *http.Request) {
	ts, err := runs.Tenants(r.Context(), s.ro)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	v := tenantsView{}
	for _, t := range ts {
		rep, err := runs.Report(r.Context(), s.ro, s.eng, t.LastRun, false)
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		v.Tenants = append(v.Tenants, tenantLine{Tenant: t, Href: tenantPath(t.Tenant), Latest: rep})
	}
	s.render(w, "tenants", page{Title: "Tenants", Nav: "tenants", Data: v})
}

func (s *Server) apiTenants(w http.ResponseWriter, r *http.Request) {
	ts, err := runs.Tenants(r.Context(), s.ro)
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"tenants": ts})
}

// tenantView is what the tenant's page shows.
type tenantView struct {
	Tenant  string
	State   *runs.TenantState
	Runs    []tenantRunView
	Open    []openRow
	Total   openRow
	Next    []nextAction
	Live    int64  // the tenant's run at work now, or 0
	Records string // the browser of what was imported
	Import  string // New import for this tenant
}

// tenantRunView is one run of the list: what it did, in words.
type tenantRunView struct {
	runs.TenantRun
	Word string // "import", "fix of run 1", "undo of run 5", …
	Note string // "notes only", "applies changes at the source"
	// TookBack is what an undo took back, the outcomes it had: "1 row
	// reverted", "12 removed, 3 released".
	TookBack string
}

// openRow is what is open of one source and kind: a count per word
// (ledger.Open*), with an example id of each.
type openRow struct {
	Source  string
	Kind    ledger.Kind
	Counts  map[string]int64
	Example map[string]string
}

// nextAction is one thing to do about what is open: in words, with the
// buttons that do it.
type nextAction struct {
	For     string // the word of what it is for (ledger.Open*), "retry", or "doctor"
	Title   string
	Text    string
	Command string // the command lines that do the same, where there are some
	Buttons []button
}

// button is one button of a next action: a link (Href), a POST (Post),
// or a run over a path the user names (Form); disabled, it says why.
type button struct {
	action
	Post string
	Form *runForm
}

// runForm is a run of the tenant over an export (doctor's run --only), or
// a resume over one (resume --from): the path is the user's to name.
type runForm struct {
	Do      string // forensics.DoRun or forensics.DoResume
	Run     int64  // resume's
	Path    string // the export, as the tenant's latest run of the source read it
	Tenant  string
	Source  string
	Profile string
	Only    string // kinds, comma-separated
}

func (s *Server) tenantPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.buildTenant(r.Context(), r.PathValue("tenant"))
	if err != nil {
		if errors.Is(err, runs.ErrNoTenant) {
			s.refuse(w, r, http.StatusNotFound, err.Error()+" (see /tenants)")
			return
		}
		s.pageError(w, r, err)
		return
	}
	s.render(w, "tenant", page{Title: "Tenant " + v.Tenant, Nav: "tenants", Data: v})
}

// apiTenant is the tenant's page as JSON: its runs with what each did (as
// summaries), and what is open.
func (s *Server) apiTenant(w http.ResponseWriter, r *http.Request) {
	st, err := runs.TenantOf(r.Context(), s.ro, s.eng, r.PathValue("tenant"))
	if err != nil {
		if errors.Is(err, runs.ErrNoTenant) {
			s.refuse(w, r, http.StatusNotFound, err.Error())
			return
		}
		s.fail(w, err)
		return
	}
	type run struct {
		report.Summary
		runs.TenantRun
	}
	out := struct {
		Tenant string             `json:"tenant"`
		Runs   []run              `json:"runs"`
		Open   []ledger.OpenGroup `json:"open"`
	}{Tenant: st.Tenant, Runs: []run{}, Open: append([]ledger.OpenGroup{}, st.Open...)}
	for _, tr := range st.Runs {
		out.Runs = append(out.Runs, run{tr.Report.Summary(), tr})
	}
	writeJSON(w, http.StatusOK, out)
}

// buildTenant reads a tenant's page.
func (s *Server) buildTenant(ctx context.Context, tenant string) (*tenantView, error) {
	st, err := runs.TenantOf(ctx, s.ro, s.eng, tenant)
	if err != nil {
		return nil, err
	}
	v := &tenantView{Tenant: tenant, State: st, Records: tenantPath(tenant) + "/records",
		Import: "/import?" + url.Values{"tenant": {tenant}}.Encode()}
	for _, tr := range st.Runs {
		v.Runs = append(v.Runs, runWords(tr))
		if tr.Report.Run.Status == runs.RunRunning && !tr.Report.Interrupted {
			v.Live = tr.Report.Run.ID
		}
	}
	v.Open, v.Total = openRows(st.Open)
	diag, err := forensics.Doctor(ctx, s.ro, s.eng, s.doctorOptions(tenant))
	if err != nil {
		return nil, err
	}
	v.Next = s.nextActions(v, diag)
	return v, nil
}

// runWords says what a run did.
func runWords(tr runs.TenantRun) tenantRunView {
	v := tenantRunView{TenantRun: tr, Word: tr.Did}
	switch tr.Did {
	case runs.DidFix:
		v.Word = fmt.Sprintf("fix of run %d", tr.Of)
		v.Note = "the failed rows of run " + strconv.FormatInt(tr.Of, 10) + ", corrected"
	case runs.DidUndo:
		v.Word = fmt.Sprintf("undo of run %d", tr.Of)
		c := tr.Report.Total
		var parts []string
		for _, p := range []struct {
			n    int64
			word string
		}{{c.Removed, "removed"}, {c.Released, "released"}, {c.Restored, "restored"}, {c.Cleared, "cleared"}, {c.Reverted, "reverted"}} {
			if p.n > 0 {
				parts = append(parts, report.Count(p.n)+" "+p.word)
			}
		}
		v.TookBack = cmp.Or(strings.Join(parts, ", "), "nothing")
	case runs.DidUpdate:
		v.Note = "applies the changes at the source"
	case runs.DidLoad:
		v.Word = "loaded"
		v.Note = "from the dump " + tr.Report.Dump
	}
	if len(tr.Only) > 0 {
		var kinds []string
		for _, k := range tr.Only {
			kinds = append(kinds, ledger.Kind(k).Plural())
		}
		only := strings.Join(kinds, ", ") + " only"
		if v.Note != "" {
			only = v.Note + "; " + only
		}
		v.Note = only
	}
	return v
}

// openWords are the words of what can be open, in the page's order.
var openWords = []string{ledger.OpenFailed, ledger.OpenSkipped, ledger.OpenOutdated, ledger.OpenConflict, ledger.OpenUnlinked, ledger.OpenUnowned}

// openRows sums what is open per source and kind, in the order of the
// table of kinds, and in total.
func openRows(gs []ledger.OpenGroup) ([]openRow, openRow) {
	total := openRow{Counts: map[string]int64{}, Example: map[string]string{}}
	var rows []openRow
	for _, src := range sourcesOf(gs) {
		for _, k := range canon.Kinds() {
			row := openRow{Source: src, Kind: k, Counts: map[string]int64{}, Example: map[string]string{}}
			for _, g := range gs {
				if g.Source != src || g.Kind != k {
					continue
				}
				row.Counts[g.What] += g.Count
				total.Counts[g.What] += g.Count
				if e := row.Example[g.What]; g.Example != "" && (e == "" || g.Example < e) {
					row.Example[g.What] = g.Example
				}
			}
			if len(row.Counts) > 0 {
				rows = append(rows, row)
			}
		}
	}
	return rows, total
}

// sourcesOf are the sources of gs, in the order first seen.
func sourcesOf(gs []ledger.OpenGroup) []string {
	var out []string
	for _, g := range gs {
		if !slices.Contains(out, g.Source) {
			out = append(out, g.Source)
		}
	}
	return out
}
