package desktop

import (
	"bytes"
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
	"crmimport/store"
	"crmimport/target"
)

// The records browser (issue 27 item 2): per tenant, the target rows of
// each kind as the runs left them, with their links by name, a search, the
// checks a consultant makes before cutover (the ledger's: unlinked,
// unowned, matched, updated, outdated, conflicts), and one record's page
// with what links to it and its ledger story beside it (forensics.StoryOf,
// as `ledger why` tells it). Read-only: every read goes through target
// (the target tables), ledger and forensics, on the pages' read-only pool.
// A page of rows is read by keyset in the database (target.Browse), so a
// tenant of 400,000 contacts opens and pages in the memory of one page.

// browsePage is how many rows a page of the browser shows.
const browsePage = 50

// filterWords say what each check means, on the page that applies it.
var filterWords = map[ledger.RowFilter]struct{ label, words string }{
	ledger.Unlinked: {"Unlinked", "A link of the record named a parent that no run had imported when it was written (R6): the link is empty, " +
		"the value kept, and a run that imports the parent completes it (R6a)."},
	ledger.Unowned: {"Unowned", "The record's owner named no user of the export (SPEC §4): imported without an owner, the value kept, " +
		"completed once a users file or a later run gives the user (R6a)."},
	ledger.MatchedRows: {"Matched", "Found, not made (R5): the row was already there with the same natural key, and the record's slot names it; " +
		"its values are the row's, never written by crmimport."},
	ledger.UpdatedRows: {"Updated", "A run with --update wrote the record's changes at the source over the row, in place (R17); " +
		"an undo of that run gives the row its values before back."},
	ledger.OutdatedRows: {"Outdated", "A run found the record changed at the source and left the row as it was, and no run has applied " +
		"the changes since (R17): a run with --update applies them (a conflict stays until --update=overwrite)."},
	ledger.ConflictedRows: {"Conflicts", "Changed at the source and edited by hand in the database since it was imported: left alone (R17); " +
		"a run with --update=overwrite writes over the edits."},
}

// tenantParam is the {tenant} of a path, "" with the page answered when
// the ledger knows no such tenant.
func (s *Server) tenantParam(w http.ResponseWriter, r *http.Request) string {
	tenant := r.PathValue("tenant")
	ok, err := ledger.HasSlots(r.Context(), s.ro, tenant)
	switch {
	case err != nil:
		s.pageError(w, r, err)
		return ""
	case !ok:
		s.refuse(w, r, http.StatusNotFound, fmt.Sprintf("no record of tenant %q was imported, matched or skipped: "+
			"a tenant is named exactly as its runs name it (see the runs)", tenant))
		return ""
	}
	return tenant
}

// recordsPath is the browser's list of tenant's rows.
func recordsPath(tenant string) string { return tenantPath(tenant) + "/records" }

// recordPath is one row's page.
func recordPath(tenant string, k ledger.Kind, id int64) string {
	return fmt.Sprintf("%s/%s/%d", recordsPath(tenant), k.Plural(), id)
}

// browseQuery reads a page of rows from a request's query: kind (plural
// or singular; the first kind with rows when absent), check, q (a source
// id or words of a name or address), link (FIELD:ID, the rows that link to
// one row), after, before and limit (API only).
func (s *Server) browseQuery(ctx context.Context, tenant string, v url.Values) (target.Query, error) {
	q := target.Query{Tenant: tenant, Search: strings.TrimSpace(v.Get("q"))}
	var err error
	if q.Kind, err = kindParam(v); err != nil {
		return q, err
	}
	if q.Kind == "" {
		if q.Kind, err = firstKind(ctx, s, tenant); err != nil {
			return q, err
		}
	}
	if q.Filter, err = ledger.ParseRowFilter(v.Get("check")); err != nil {
		return q, badRequest("check: %v", err)
	}
	if link := v.Get("link"); link != "" {
		field, id, _ := strings.Cut(link, ":")
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n < 1 || field == "" {
			return q, badRequest("link=%q is not a link field and a row's id (FIELD:ID)", link)
		}
		q.LinkField, q.LinkID = field, n
	}
	if q.After, err = idParam(v, "after"); err != nil {
		return q, err
	}
	if q.Before, err = idParam(v, "before"); err != nil {
		return q, err
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > target.MaxPage {
			return q, badRequest("limit=%q: a page holds 1 to %d rows", l, target.MaxPage)
		}
		q.Limit = n
	}
	return q, nil
}

// firstKind is the first kind, in plan order, of which tenant has rows:
// the tab a browser opens on (the first kind when it has none).
func firstKind(ctx context.Context, s *Server, tenant string) (ledger.Kind, error) {
	kinds := canon.Kinds()
	for _, k := range kinds {
		n, err := target.CountRows(ctx, s.ro, tenant, k, "")
		if err != nil {
			return "", err
		}
		if n > 0 {
			return k, nil
		}
	}
	return kinds[0], nil
}

// browseFailed answers a query the target package cannot answer as a bad
// request, anything else as it is.
func browseFailed(err error) error {
	if errors.Is(err, target.ErrBadQuery) {
		return badRequest("%v", err)
	}
	return err
}

// recordsView is the browser's list of a tenant's rows of one kind.
type recordsView struct {
	Tenant    string
	TenantURL string // the customer's page
	ListURL   string
	Kind      ledger.Kind
	Tabs      []tabView
	Checks    []tabView
	All       tabView // every row of the kind: no check
	Check     ledger.RowFilter
	Words     string // what the check means
	Search    string
	Link      string // the link the rows are chosen by, in words ("" for none)
	LinkField string // as the form keeps it: FIELD:ID
	Columns   []string
	Rows      []rowView
	Total     int64
	Pager     pager
}

// tabView is a kind's tab or a check's: its label, count and address.
type tabView struct {
	Name    string // the kind or the check, as the query names it
	Label   string
	Count   int64
	URL     string
	Current bool
}

// rowView is a row of the list: its address, the cells of the kind's
// columns, and its links with theirs.
type rowView struct {
	target.Record
	URL   string
	Cells []target.Field
	Links []linkView
}

// linkView is a link with the address of the row it names.
type linkView struct {
	target.LinkTo
	URL string
}

func (s *Server) newRow(tenant string, r target.Record, columns []string) rowView {
	v := rowView{Record: r, URL: recordPath(tenant, r.Kind, r.ID)}
	for _, c := range columns {
		for _, f := range r.Fields {
			if f.Name == c {
				v.Cells = append(v.Cells, f)
			}
		}
	}
	v.Links = linkViews(tenant, r.Links)
	return v
}

func linkViews(tenant string, links []target.LinkTo) []linkView {
	out := make([]linkView, 0, len(links))
	for _, l := range links {
		lv := linkView{LinkTo: l}
		if l.ID != 0 {
			lv.URL = recordPath(tenant, l.Kind, l.ID)
		}
		out = append(out, lv)
	}
	return out
}

// title is a word with its first letter in upper case.
func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (s *Server) recordsPage(w http.ResponseWriter, r *http.Request) {
	tenant := s.tenantParam(w, r)
	if tenant == "" {
		return
	}
	ctx := r.Context()
	q, err := s.browseQuery(ctx, tenant, r.URL.Query())
	if err != nil {
		s.refuse(w, r, http.StatusBadRequest, err.Error())
		return
	}
	q.Limit = browsePage
	p, err := target.Browse(ctx, s.ro, store.DialectOf(s.ro), q)
	if err != nil {
		if errors.Is(err, target.ErrBadQuery) {
			s.refuse(w, r, http.StatusBadRequest, err.Error())
			return
		}
		s.pageError(w, r, err)
		return
	}
	list := recordsPath(tenant)
	v := recordsView{Tenant: tenant, TenantURL: tenantPath(tenant), ListURL: list, Kind: q.Kind, Check: q.Filter, Search: q.Search,
		Columns: p.Columns, Total: p.Total}
	if q.LinkField != "" {
		v.LinkField = q.LinkField + ":" + strconv.FormatInt(q.LinkID, 10)
		v.Link = s.linkWords(ctx, tenant, q.Kind, q.LinkField, q.LinkID)
	}
	link := func(kind ledger.Kind, check ledger.RowFilter, keep bool) string {
		u := url.Values{"kind": {kind.Plural()}}
		if check != "" {
			u.Set("check", string(check))
		}
		if keep {
			if q.Search != "" {
				u.Set("q", q.Search)
			}
			if v.LinkField != "" {
				u.Set("link", v.LinkField)
			}
		}
		return list + "?" + u.Encode()
	}
	for _, k := range canon.Kinds() {
		n, err := target.CountRows(ctx, s.ro, tenant, k, "")
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		v.Tabs = append(v.Tabs, tabView{Name: k.Plural(), Label: title(k.Plural()), Count: n, URL: link(k, "", false), Current: k == q.Kind})
	}
	// The checks' counts are of the kind's rows, whatever the search: what
	// is left to check before cutover.
	for _, t := range v.Tabs {
		if t.Current {
			v.All = tabView{Label: "All " + t.Name, Count: t.Count, URL: link(q.Kind, "", true), Current: q.Filter == ""}
		}
	}
	for _, f := range target.FiltersOf(q.Kind) {
		n, err := target.CountRows(ctx, s.ro, tenant, q.Kind, f)
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		v.Checks = append(v.Checks, tabView{Name: string(f), Label: filterWords[f].label, Count: n, URL: link(q.Kind, f, true), Current: f == q.Filter})
	}
	if q.Filter != "" {
		v.Words = filterWords[q.Filter].words
	}
	for _, row := range p.Rows {
		v.Rows = append(v.Rows, s.newRow(tenant, row, p.Columns))
	}
	filters := url.Values{"kind": {q.Kind.Plural()}, "check": {string(q.Filter)}, "q": {q.Search}, "link": {v.LinkField}}
	var prev, next string
	if p.Prev != 0 {
		prev = strconv.FormatInt(p.Prev, 10)
	}
	if p.Next != 0 {
		next = strconv.FormatInt(p.Next, 10)
	}
	v.Pager = newPager(list, filters, p.First, int64(len(p.Rows)), p.Total, prev, next)
	s.render(w, "records", page{Title: fmt.Sprintf("Records of tenant %s", tenant), Nav: "tenants", Data: v})
}

// linkWords name the row that rows are chosen by linking to: "linked to
// contact Hannah Okafor (contact_id)".
func (s *Server) linkWords(ctx context.Context, tenant string, k ledger.Kind, field string, id int64) string {
	pk, ok := canon.KindOfLinkField(field)
	if !ok {
		return fmt.Sprintf("%s = %d", field, id)
	}
	name := fmt.Sprintf("%s %d", pk, id)
	if d, err := target.ReadDetail(ctx, s.ro, store.DialectOf(s.ro), tenant, pk, id); err == nil && d.Name != "" {
		name = fmt.Sprintf("%s %s", pk, d.Name)
	}
	return fmt.Sprintf("linked to %s (their %s)", name, field)
}

func (s *Server) apiRecords(w http.ResponseWriter, r *http.Request) {
	tenant := s.tenantParam(w, r)
	if tenant == "" {
		return
	}
	q, err := s.browseQuery(r.Context(), tenant, r.URL.Query())
	if err != nil {
		s.fail(w, err)
		return
	}
	p, err := target.Browse(r.Context(), s.ro, store.DialectOf(s.ro), q)
	if err != nil {
		s.fail(w, browseFailed(err))
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Tenant string `json:"tenant"`
		*target.Page
	}{tenant, p})
}

// recordView is one row's page: the row, what links to it, and its
// ledger story.
type recordView struct {
	Tenant    string
	TenantURL string
	ListURL   string // the list of the row's kind
	D         *target.Detail
	Links     []linkView
	Children  []childView
	// Flags are the checks the row is in, each with its words.
	Flags []flagView
	// Stories are the ledger's stories of the records that name the row,
	// one per source id (forensics.StoryOf), as a line of events and as
	// `ledger why` tells it.
	Stories []storyView
}

type flagView struct {
	Name, Label, Words string
}

// childView is a kind of rows that link to the row: the first of them,
// and the address of all of them in the list.
type childView struct {
	target.Children
	Label   string
	Rows    []childRow
	MoreURL string // the list of every one of them ("" when all are shown)
	AllURL  string
}

type childRow struct {
	target.RowName
	URL string
}

// childLabel heads the rows of one kind that link to a row of kind k:
// "Deals", "Deals owned" (a user's), "Leads (converted contact)" for a
// link that names a role.
func childLabel(k ledger.Kind, c target.Children) string {
	switch {
	case canon.IsOwner(c.Field):
		return title(c.Kind.Plural()) + " owned"
	case c.Field != canon.LinkField(k):
		return fmt.Sprintf("%s (%s)", title(c.Kind.Plural()), strings.ToLower(linkLabel(c.Field)))
	}
	return title(c.Kind.Plural())
}

// storyView is one source id's story: its events oldest first, and the
// text `ledger why --source-id` writes.
type storyView struct {
	Source, SourceID string
	Events           []storyEvent
	Text             string
	WhyURL           string // the Ledger page's story of it
}

// storyEvent is one thing that happened to a record, told by the run
// that did it (0: no run).
type storyEvent struct {
	Run    int64
	Class  string // created, matched, updated, outdated, conflict, relinked, waits, failed, deleted
	Words  string
	Values []report.FieldChange // before and after, where a change has them
	Note   string
}

func (s *Server) recordPage(w http.ResponseWriter, r *http.Request) {
	tenant := s.tenantParam(w, r)
	if tenant == "" {
		return
	}
	v, err := s.buildRecord(r.Context(), tenant, r.PathValue("kind"), r.PathValue("id"))
	if err != nil {
		code := http.StatusInternalServerError
		switch {
		case errors.Is(err, target.ErrNoRow):
			code = http.StatusNotFound
		case isBadPath(err):
			code = http.StatusBadRequest
		}
		s.refuse(w, r, code, err.Error())
		return
	}
	name := v.D.Name
	if name == "" {
		name = fmt.Sprintf("%s %d", v.D.Kind, v.D.ID)
	}
	s.render(w, "record", page{Title: fmt.Sprintf("%s %s · tenant %s", title(string(v.D.Kind)), name, tenant), Nav: "tenants", Data: v})
}

// isBadPath reports whether err is a request the page cannot take (a bad
// kind or id in the path).
func isBadPath(err error) bool {
	var bad *badPath
	return errors.As(err, &bad)
}

// badPath is a kind or a row id in a path that names none.
type badPath struct{ msg string }

func (e *badPath) Error() string { return e.msg }

// rowParams reads a path's {kind} and {id}.
func rowParams(kind, id string) (ledger.Kind, int64, error) {
	k, err := canon.ParseKind(kind)
	if err != nil {
		return "", 0, &badPath{err.Error()}
	}
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < 1 {
		return "", 0, &badPath{fmt.Sprintf("%q is not a row id", id)}
	}
	return k, n, nil
}

// buildRecord reads one row's page: the row with its links and the rows
// that link to it (target.ReadDetail), and the story of each record that
// names it (forensics.StoryOf).
func (s *Server) buildRecord(ctx context.Context, tenant, kind, id string) (*recordView, error) {
	k, n, err := rowParams(kind, id)
	if err != nil {
		return nil, err
	}
	d, err := target.ReadDetail(ctx, s.ro, store.DialectOf(s.ro), tenant, k, n)
	if err != nil {
		return nil, err
	}
	list := recordsPath(tenant)
	v := &recordView{Tenant: tenant, TenantURL: tenantPath(tenant), ListURL: list + "?" + url.Values{"kind": {k.Plural()}}.Encode(),
		D: d, Links: linkViews(tenant, d.Links)}
	for _, f := range d.Flags {
		v.Flags = append(v.Flags, flagView{string(f), filterWords[f].label, filterWords[f].words})
	}
	for _, c := range d.Children {
		all := list + "?" + url.Values{"kind": {c.Kind.Plural()}, "link": {fmt.Sprintf("%s:%d", c.Field, n)}}.Encode()
		cv := childView{Children: c, Label: childLabel(k, c), AllURL: all}
		if c.Total > int64(len(c.Rows)) {
			cv.MoreURL = all
		}
		for _, row := range c.Rows {
			cv.Rows = append(cv.Rows, childRow{row, recordPath(tenant, c.Kind, row.ID)})
		}
		v.Children = append(v.Children, cv)
	}
	// One story per source id that names the row: StoryOf tells every
	// slot of that id, of any source; the row's are those naming it.
	var told []string
	for _, slot := range d.Slots {
		if slices.Contains(told, slot.SourceID) {
			continue
		}
		told = append(told, slot.SourceID)
		st, err := forensics.StoryOf(ctx, s.ro, s.eng, tenant, k, slot.SourceID)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		forensics.WriteStory(&b, st)
		sv := storyView{Source: slot.Source, SourceID: slot.SourceID, Text: b.String(),
			WhyURL: "/ledger?" + url.Values{"tenant": {tenant}, "kind": {string(k)}, "source_id": {slot.SourceID}}.Encode()}
		for _, sl := range st.Slots {
			if sl.Row != nil && sl.Row.ID == n {
				sv.Events = append(sv.Events, slotEvents(sl)...)
			}
		}
		sv.Events = append(sv.Events, failureEvents(st)...)
		slices.SortStableFunc(sv.Events, func(a, b storyEvent) int { return eventOrder(a) - eventOrder(b) })
		v.Stories = append(v.Stories, sv)
	}
	return v, nil
}

// eventOrder places an storyEvent in a story: by its run (runs are numbered in
// the order they started), what waits last.
func eventOrder(e storyEvent) int {
	if e.Class == "waits" {
		return int(^uint(0) >> 1)
	}
	return int(e.Run)
}

// slotEvents are what the ledger tells of one slot that names the row:
// its claim, what runs found changed at the source and updated (R17), the
// links completed since and those that still wait (R6a).
func slotEvents(sl forensics.SlotStory) []storyEvent {
	var out []storyEvent
	status := ""
	if sl.Run != nil {
		status = sl.Run.Status
	}
	switch sl.Action {
	case string(ledger.Created):
		out = append(out, storyEvent{Run: sl.RunID, Class: "created", Words: "created it", Note: runNote(status, sl.ClaimedAt)})
	case string(ledger.Matched):
		out = append(out, storyEvent{Run: sl.RunID, Class: "matched", Words: "matched it: found the row already there (R5), not made",
			Note: runNote(status, sl.ClaimedAt)})
	}
	reverted := map[int64]int64{}
	told := map[int64]bool{}
	for _, u := range sl.Updates {
		reverted[u.Run] = u.RevertedBy
	}
	for _, c := range sl.Changes {
		e := storyEvent{Run: c.Run, Class: c.Change, Values: c.Values}
		switch c.Change {
		case ledger.ChangeOutdated:
			e.Words = "found it changed at the source and left the row as it was: outdated"
		case ledger.ChangeConflict:
			e.Words = "found it changed at the source, and its row edited by hand since (" + strings.Join(c.Edited, ", ") + "): a conflict, left alone"
		case ledger.ChangeDeletedSince:
			e.Class, e.Words = "deleted", "found it deleted in the source since: left in place (deletions are never propagated)"
		case ledger.ChangeUpdated, ledger.ChangeOverwritten:
			e.Class, e.Words = "updated", "updated it with its changes at the source"
			if c.Change == ledger.ChangeOverwritten {
				e.Words = "updated it, writing over the hand edits of " + strings.Join(c.Edited, ", ")
			}
			told[c.Run] = true
			if by := reverted[c.Run]; by != 0 {
				e.Note = fmt.Sprintf("reverted by run %d (undo)", by)
			}
		default:
			continue // an undo's removal: the row is gone
		}
		if c.UndoneBy != 0 && e.Note == "" {
			e.Note = fmt.Sprintf("run %d was undone by run %d", c.Run, c.UndoneBy)
		}
		out = append(out, e)
	}
	for _, u := range sl.Updates {
		if told[u.Run] {
			continue
		}
		// An update kept without its change (a file older than the
		// record of changes): its fields alone.
		e := storyEvent{Run: u.Run, Class: "updated", Words: "updated it: " + strings.Join(u.Fields, ", ")}
		if u.RevertedBy != 0 {
			e.Note = fmt.Sprintf("reverted by run %d (undo)", u.RevertedBy)
		}
		out = append(out, e)
	}
	for _, l := range sl.Links {
		if l.CompletedBy != 0 {
			out = append(out, storyEvent{Run: l.CompletedBy, Class: "relinked",
				Words: fmt.Sprintf("relinked it: its %s, %s %s, was imported, and the link completed (R6a)", l.Field, l.Kind, l.SourceID)})
			continue
		}
		word := "unlinked"
		if canon.IsOwner(l.Field) {
			word = "unowned"
		}
		out = append(out, storyEvent{Class: "waits",
			Words: fmt.Sprintf("Its %s waits for %s %s (%s): a run that imports it completes the link (R6a)", l.Field, l.Kind, l.SourceID, word)})
	}
	return out
}

// runNote is a claiming run's status and the time of the claim.
func runNote(status, at string) string {
	if t, err := ledger.ParseTime(at); err == nil {
		at = t.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if status == "" {
		return "claimed " + at + "; the run is not in this database"
	}
	return "claimed " + at + "; the run is " + status
}

// failureEvents are the failed attempts at a story's record (R4).
func failureEvents(st *forensics.Story) []storyEvent {
	var out []storyEvent
	for _, f := range st.Failures {
		out = append(out, storyEvent{Run: f.Run, Class: "failed", Words: "failed it: " + f.Reason, Note: fmt.Sprintf("%s:%d (source %s)", f.File, f.Line, f.Source)})
	}
	return out
}

func (s *Server) apiRecord(w http.ResponseWriter, r *http.Request) {
	tenant := s.tenantParam(w, r)
	if tenant == "" {
		return
	}
	k, n, err := rowParams(r.PathValue("kind"), r.PathValue("id"))
	if err != nil {
		s.fail(w, badRequest("%v", err))
		return
	}
	d, err := target.ReadDetail(r.Context(), s.ro, store.DialectOf(s.ro), tenant, k, n)
	if err != nil {
		if errors.Is(err, target.ErrNoRow) {
			s.refuse(w, r, http.StatusNotFound, err.Error())
			return
		}
		s.fail(w, err)
		return
	}
	// The stories of the records that name the row, as `ledger why
	// --source-id` gives them in JSON.
	stories := []*forensics.Story{}
	var told []string
	for _, slot := range d.Slots {
		if slices.Contains(told, slot.SourceID) {
			continue
		}
		told = append(told, slot.SourceID)
		st, err := forensics.StoryOf(r.Context(), s.ro, s.eng, tenant, k, slot.SourceID)
		if err != nil {
			s.fail(w, err)
			return
		}
		stories = append(stories, st)
	}
	writeJSON(w, http.StatusOK, struct {
		Tenant string `json:"tenant"`
		*target.Detail
		Stories []*forensics.Story `json:"stories"`
	}{tenant, d, stories})
}

// fieldLabel is a field as a page heads it: "close_date" as "Close date".
func fieldLabel(f string) string { return title(strings.ReplaceAll(f, "_", " ")) }

// linkLabel is a link field as a page heads it: the role and the parent
// it names, "company_id" as "Company", "owner_id" as "Owner",
// "converted_contact_id" as "Converted contact".
func linkLabel(f string) string { return fieldLabel(strings.TrimSuffix(f, "_id")) }
