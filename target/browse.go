package target

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/store"
)

// The records browser (issue 27 item 2): a tenant's rows of one kind, a
// page at a time, with their links shown by name, and one row with the
// rows that link to it. Read-only. A page is read by keyset — after the
// last row of the page before or before the first of the page after,
// never OFFSET, which reads every row it skips — and its counts are the
// database's, so that memory holds one page however many rows the tenant
// has. The checks of a row (unlinked, matched, outdated …) are the
// ledger's sets (ledger.RowFilter), read here as `id IN (…)`.

// MaxPage is the most rows one page holds.
const MaxPage = 500

// ChildrenShown is how many rows of each kind that link to a row its
// page lists (the others are counted, and a page of them is a link away).
const ChildrenShown = 20

// nameLimit is how many characters of a name a page shows: a note is
// named by its body, which may run to pages.
const nameLimit = 100

// ErrBadQuery is a query for rows that cannot be answered: a page both
// after and before a row, a size out of range, a link that is not one of
// the kind's.
var ErrBadQuery = errors.New("bad query")

// Query chooses a page of a tenant's rows of one kind: those in the
// ledger's check Filter ("" for every row), that link to the row LinkID
// through their link field LinkField (both or neither), whose source id is
// Search whole or whose name or address holds it (any case), after the row
// After or before the row Before (keyset: ids of a page's last and first
// rows), at most Limit (MaxPage when 0), in the order of their ids.
type Query struct {
	Tenant    string
	Kind      ledger.Kind
	Filter    ledger.RowFilter
	LinkField string
	LinkID    int64
	Search    string
	After     int64
	Before    int64
	Limit     int
}

// Page is a page of rows and what they are a page of.
type Page struct {
	Kind ledger.Kind `json:"kind"`
	// Columns are the fields each row shows beside its name and links
	// (ListFields).
	Columns []string `json:"columns"`
	Rows    []Record `json:"rows"`
	// Total counts the rows the query selects; First is the place of
	// Rows[0] among them (1-based, 0 for none).
	Total int64 `json:"total"`
	First int64 `json:"first"`
	// Next and Prev are the After and Before of the pages next to this
	// one, 0 when there is none.
	Next int64 `json:"next"`
	Prev int64 `json:"prev"`
}

// Record is one row as the browser shows it. Every value is data from an
// export: text, never markup.
type Record struct {
	Kind        ledger.Kind `json:"kind"`
	ID          int64       `json:"id"`
	Name        string      `json:"name"`
	Placeholder bool        `json:"placeholder"` // loaded from a dump: no export's values
	// Fields are its canonical fields but the id, the links and the
	// deleted flag, in order, as text.
	Fields []Field `json:"fields"`
	// Links are its link fields, in the order of the table of kinds.
	Links []LinkTo `json:"links"`
	// Extra are the columns nothing mapped (SPEC §4), by name; the
	// values kept for links that wait are in Links.
	Extra []Field `json:"extra"`
	// Slots are the records of the export that name the row.
	Slots []ledger.RowSlot `json:"slots"`
	// Flags are the ledger's checks the row is in (FiltersOf its kind).
	Flags []ledger.RowFilter `json:"flags"`
}

// Field is a field and its value as text ("" for none).
type Field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// LinkTo is a link of a row: the parent row it names (ID 0: none), by
// name, or the parent's source id it waits for (R6a).
type LinkTo struct {
	Field string      `json:"field"`
	Kind  ledger.Kind `json:"kind"`
	ID    int64       `json:"id"`
	Name  string      `json:"name,omitempty"`
	// Waits is the parent's source id the link waits for (R6a: unlinked,
	// or unowned for the owner), "" when it waits for none.
	Waits string `json:"waits,omitempty"`
	Owner bool   `json:"owner"`
}

// FiltersOf are the ledger's checks that can select rows of kind k, from
// the table of kinds: unlinked for a kind with a parent but its owner,
// unowned for one with an owner, matched for one with a natural key (R5);
// the changes at the source for every kind.
func FiltersOf(k ledger.Kind) []ledger.RowFilter {
	var out []ledger.RowFilter
	for _, f := range ledger.RowFilters() {
		switch f {
		case ledger.Unlinked:
			if !slices.ContainsFunc(canon.Parents(k), func(l canon.Link) bool { return !canon.IsOwner(l.Field) }) {
				continue
			}
		case ledger.Unowned:
			if !slices.ContainsFunc(canon.Parents(k), func(l canon.Link) bool { return canon.IsOwner(l.Field) }) {
				continue
			}
		case ledger.MatchedRows:
			if canon.KindTable().Def(k).Key == "" {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// ListFields are the fields a page of kind k's rows shows in columns:
// its canonical fields but the id, the deleted flag, the links (shown by
// name), those that make its name (Name), the source's date of creation
// and, where another field names the record, its body (a record's page
// shows them all).
func ListFields(k ledger.Kind) []string {
	named := nameFields(k)
	var out []string
	for _, f := range canon.Fields(k) {
		_, isLink := canon.KindOfLinkField(f)
		switch {
		case f == "id", f == "deleted", f == "created_at", f == "body", isLink, slices.Contains(named, f):
		default:
			out = append(out, f)
		}
	}
	return out
}

// nameFields are the fields whose values name a row of kind k: a first
// and a last name where it has them, else its label column (the text
// field a dump's placeholder fills: canon.Label).
func nameFields(k ledger.Kind) []string {
	if canon.HasField(k, "first_name") && canon.HasField(k, "last_name") {
		return []string{"first_name", "last_name"}
	}
	return []string{canon.Label(k)}
}

// addressFields are the fields of kind k that hold an address, which a
// search looks in beside the name.
func addressFields(k ledger.Kind) []string {
	var out []string
	for _, f := range []string{"email", "from", "to"} {
		if canon.HasField(k, f) {
			out = append(out, f)
		}
	}
	return out
}

// Name is what names a row of kind k whose values are v (State.Values):
// its name fields, else its address, else "" — at most nameLimit
// characters of it.
func Name(k ledger.Kind, v map[string]any) string {
	var parts []string
	for _, f := range nameFields(k) {
		if s := strings.TrimSpace(valueText(v[f])); s != "" {
			parts = append(parts, s)
		}
	}
	name := strings.Join(parts, " ")
	if name == "" {
		for _, f := range addressFields(k) {
			if name = strings.TrimSpace(valueText(v[f])); name != "" {
				break
			}
		}
	}
	name = strings.Join(strings.Fields(name), " ") // a body's lines, on one
	if utf8.RuneCountInString(name) > nameLimit {
		r := []rune(name)
		name = strings.TrimSpace(string(r[:nameLimit-1])) + "…"
	}
	return name
}

// valueText is a row's value as text: text as it is, a number in
// decimal, nothing as "".
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// fieldText is field f's value as a page shows it: a flag as yes or no.
func fieldText(f string, v any) string {
	if canon.IsFlagField(f) && v != nil {
		if n, ok := v.(int64); ok {
			if n != 0 {
				return "yes"
			}
			return "no"
		}
	}
	return valueText(v)
}

// quoted is a column's name as SQL (from and to are words of SQL).
func quoted(f string) string { return `"` + f + `"` }

// where is the WHERE of q's rows (without the keyset), and its
// arguments; noFilter leaves the check out (the counts per check).
func (q Query) where(noFilter bool) (string, []any) {
	w, args := " WHERE tenant_id = ?", []any{q.Tenant}
	if q.Filter != "" && !noFilter {
		set := q.Filter.Rows(q.Tenant, q.Kind, canon.LinkField(ledger.User))
		w, args = w+" AND id IN ("+set.SQL+")", append(args, set.Args...)
	}
	if q.LinkField != "" {
		w, args = w+" AND "+quoted(linkColumn(q.Kind, q.LinkField))+" = ?", append(args, q.LinkID)
	}
	if s := strings.TrimSpace(q.Search); s != "" {
		named := ledger.RowsNamed(q.Tenant, q.Kind, s)
		or := []string{"id IN (" + named.SQL + ")"}
		args = append(args, named.Args...)
		var name []string
		for _, f := range nameFields(q.Kind) {
			name = append(name, "coalesce("+quoted(f)+", '')")
		}
		pattern := likePattern(s)
		or = append(or, "lower("+strings.Join(name, " || ' ' || ")+") LIKE ? ESCAPE '!'")
		args = append(args, pattern)
		for _, f := range addressFields(q.Kind) {
			or = append(or, "lower(coalesce("+quoted(f)+", '')) LIKE ? ESCAPE '!'")
			args = append(args, pattern)
		}
		w += " AND (" + strings.Join(or, " OR ") + ")"
	}
	return w, args
}

// likePattern is a LIKE pattern that finds s anywhere, its own % and _
// meaning themselves (escaped with !), in lower case: SQLite's lower()
// folds ASCII only, PostgreSQL's every letter, so a search is of any case
// in ASCII on both.
func likePattern(s string) string {
	r := strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")
	return "%" + r.Replace(strings.ToLower(s)) + "%"
}

// check refuses a query that cannot be answered; a limit of 0 is MaxPage.
func (q *Query) check() error {
	switch {
	case q.After < 0 || q.Before < 0:
		return fmt.Errorf("%w: after and before name a row of the page next to it, not %d", ErrBadQuery, min(q.After, q.Before))
	case q.After > 0 && q.Before > 0:
		return fmt.Errorf("%w: a page is after one row or before one, not both", ErrBadQuery)
	case q.Limit < 0 || q.Limit > MaxPage:
		return fmt.Errorf("%w: a page holds 1 to %d rows, not %d", ErrBadQuery, MaxPage, q.Limit)
	case (q.LinkField == "") != (q.LinkID == 0):
		return fmt.Errorf("%w: a link names its field and the row it links to", ErrBadQuery)
	case q.LinkField != "" && !slices.ContainsFunc(canon.Parents(q.Kind), func(l canon.Link) bool { return l.Field == q.LinkField }):
		return fmt.Errorf("%w: %s is not a link of %s", ErrBadQuery, q.LinkField, q.Kind.Plural())
	case q.Filter != "" && !slices.Contains(FiltersOf(q.Kind), q.Filter):
		return fmt.Errorf("%w: no %s can be %s", ErrBadQuery, q.Kind, q.Filter)
	case q.Limit == 0:
		q.Limit = MaxPage
	}
	return nil
}

// Browse reads one page of the rows q chooses, each with its links by
// name, the records that name it and the checks it is in. Memory holds the
// page, however many rows the tenant has.
func Browse(ctx context.Context, db Querier, d store.Dialect, q Query) (*Page, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	p := &Page{Kind: q.Kind, Columns: ListFields(q.Kind), Rows: []Record{}}
	table := q.Kind.Table()
	where, args := q.where(false)
	if err := scalar(ctx, db, "SELECT count(*) FROM "+table+where, args, &p.Total); err != nil {
		return nil, fmt.Errorf("count %s: %w", q.Kind.Plural(), err)
	}
	page, order := where, " ORDER BY id LIMIT ?"
	pageArgs := append([]any(nil), args...)
	switch {
	case q.Before > 0:
		page, pageArgs, order = page+" AND id < ?", append(pageArgs, q.Before), " ORDER BY id DESC LIMIT ?"
	case q.After > 0:
		page, pageArgs = page+" AND id > ?", append(pageArgs, q.After)
	}
	var ids []int64
	err := store.EachRow(ctx, db, "SELECT id FROM "+table+page+order, append(pageArgs, q.Limit), func(rows store.Scanner) error {
		var id int64
		err := rows.Scan(&id)
		ids = append(ids, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read a page of %s: %w", q.Kind.Plural(), err)
	}
	if q.Before > 0 {
		slices.Reverse(ids)
	}
	if len(ids) == 0 {
		return p, nil
	}
	var before int64
	if err := scalar(ctx, db, "SELECT count(*) FROM "+table+where+" AND id < ?", append(args, ids[0]), &before); err != nil {
		return nil, fmt.Errorf("count %s: %w", q.Kind.Plural(), err)
	}
	p.First = before + 1
	if before > 0 {
		p.Prev = ids[0]
	}
	if before+int64(len(ids)) < p.Total {
		p.Next = ids[len(ids)-1]
	}
	if p.Rows, err = records(ctx, db, d, q.Tenant, q.Kind, ids); err != nil {
		return nil, err
	}
	return p, nil
}

// CountRows counts tenant's rows of kind k, all of them ("" for filter)
// or those in the ledger's check filter.
func CountRows(ctx context.Context, db Querier, tenant string, k ledger.Kind, filter ledger.RowFilter) (int64, error) {
	q := Query{Tenant: tenant, Kind: k, Filter: filter}
	where, args := q.where(false)
	var n int64
	if err := scalar(ctx, db, "SELECT count(*) FROM "+k.Table()+where, args, &n); err != nil {
		return 0, fmt.Errorf("count %s: %w", k.Plural(), err)
	}
	return n, nil
}

func scalar(ctx context.Context, db Querier, query string, args []any, dest *int64) error {
	return store.EachRow(ctx, db, query, args, func(rows store.Scanner) error { return rows.Scan(dest) })
}

// records reads rows ids of kind k (tenant's) as the browser shows them,
// in the order of ids: a row that is not there is left out.
func records(ctx context.Context, db Querier, d store.Dialect, tenant string, k ledger.Kind, ids []int64) ([]Record, error) {
	states, err := ReadRows(ctx, db, d, k, tenant, ids)
	if err != nil {
		return nil, err
	}
	slots, err := ledger.SlotsOfRows(ctx, db, tenant, k, ids)
	if err != nil {
		return nil, err
	}
	waiting, err := ledger.WaitingLinks(ctx, db, tenant, k, ids)
	if err != nil {
		return nil, err
	}
	flags, err := ledger.FlagsOf(ctx, db, tenant, k, canon.LinkField(ledger.User), FiltersOf(k), ids)
	if err != nil {
		return nil, err
	}
	// The parents' names: one read per parent kind, of the rows the page
	// links to.
	parentIDs := map[ledger.Kind][]int64{}
	for _, id := range ids {
		for _, l := range canon.Parents(k) {
			if p := states[id].Link(l.Field); p != 0 && !slices.Contains(parentIDs[l.Kind], p) {
				parentIDs[l.Kind] = append(parentIDs[l.Kind], p)
			}
		}
	}
	names := map[ledger.Kind]map[int64]string{}
	for pk, pids := range parentIDs {
		rows, err := ReadRows(ctx, db, d, pk, tenant, pids)
		if err != nil {
			return nil, err
		}
		names[pk] = map[int64]string{}
		for id, s := range rows {
			names[pk][id] = Name(pk, s.Values)
		}
	}
	out := make([]Record, 0, len(ids))
	for _, id := range ids {
		s, ok := states[id]
		if !ok {
			continue
		}
		r := Record{Kind: k, ID: id, Name: Name(k, s.Values), Placeholder: s.Placeholder, Fields: []Field{}, Links: []LinkTo{},
			Extra: []Field{}, Slots: slots[id], Flags: flags[id]}
		if r.Slots == nil {
			r.Slots = []ledger.RowSlot{}
		}
		if r.Flags == nil {
			r.Flags = []ledger.RowFilter{}
		}
		for _, f := range canon.Fields(k) {
			if _, isLink := canon.KindOfLinkField(f); isLink || f == "id" || f == "deleted" {
				continue
			}
			r.Fields = append(r.Fields, Field{f, fieldText(f, s.Values[f])})
		}
		for _, l := range canon.Parents(k) {
			lt := LinkTo{Field: l.Field, Kind: l.Kind, ID: s.Link(l.Field), Owner: canon.IsOwner(l.Field)}
			if lt.ID != 0 {
				lt.Name = names[l.Kind][lt.ID]
			}
			for _, w := range waiting[id] {
				if w.Field == l.Field {
					lt.Waits = w.ParentSourceID
				}
			}
			r.Links = append(r.Links, lt)
		}
		r.Extra = extraFields(k, s.Extra())
		out = append(out, r)
	}
	return out, nil
}

// extraFields are a row's extra columns (its JSON object), by name, but
// the values kept for links that wait (shown with the link): a value that
// is not text as its JSON. An extra that is no JSON object is one field
// named "" (never dropped).
func extraFields(k ledger.Kind, extra string) []Field {
	out := []Field{}
	if extra == "" {
		return out
	}
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(extra))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return append(out, Field{"", extra})
	}
	for name, v := range m {
		if slices.ContainsFunc(canon.Parents(k), func(l canon.Link) bool { return l.Field == name }) {
			continue
		}
		text, ok := v.(string)
		if !ok {
			b, _ := json.Marshal(v)
			text = string(b)
		}
		out = append(out, Field{name, text})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Children are the rows of one kind that link to a row through one link
// field: the first ChildrenShown of them, by id, and how many there are.
type Children struct {
	Kind  ledger.Kind `json:"kind"`
	Field string      `json:"field"`
	Total int64       `json:"total"`
	Rows  []RowName   `json:"rows"`
}

// RowName is a row by its id and its name.
type RowName struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// Detail is one row and the rows that link to it.
type Detail struct {
	Record
	// Children are, per kind and link field that may name the row (the
	// table of kinds, in plan order), those that do; none where none does.
	Children []Children `json:"children"`
}

// ErrNoRow is a row that is not there (not the tenant's, or gone).
var ErrNoRow = errors.New("no such row")

// ReadDetail reads tenant's row id of kind k, as Browse shows a row, with
// the rows that link to it.
func ReadDetail(ctx context.Context, db Querier, d store.Dialect, tenant string, k ledger.Kind, id int64) (*Detail, error) {
	recs, err := records(ctx, db, d, tenant, k, []int64{id})
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s %d of tenant %s: %w", k, id, tenant, ErrNoRow)
	}
	out := &Detail{Record: recs[0], Children: []Children{}}
	for _, ck := range canon.Kinds() {
		for _, l := range canon.Parents(ck) {
			if l.Kind != k {
				continue
			}
			c := Children{Kind: ck, Field: l.Field, Rows: []RowName{}}
			where := " WHERE tenant_id = ? AND " + quoted(l.Field) + " = ?"
			if err := scalar(ctx, db, "SELECT count(*) FROM "+ck.Table()+where, []any{tenant, id}, &c.Total); err != nil {
				return nil, fmt.Errorf("count the %s of %s %d: %w", ck.Plural(), k, id, err)
			}
			if c.Total == 0 {
				continue
			}
			var ids []int64
			err := store.EachRow(ctx, db, "SELECT id FROM "+ck.Table()+where+" ORDER BY id LIMIT ?", []any{tenant, id, ChildrenShown},
				func(rows store.Scanner) error {
					var cid int64
					err := rows.Scan(&cid)
					ids = append(ids, cid)
					return err
				})
			if err != nil {
				return nil, fmt.Errorf("read the %s of %s %d: %w", ck.Plural(), k, id, err)
			}
			states, err := ReadRows(ctx, db, d, ck, tenant, ids)
			if err != nil {
				return nil, err
			}
			for _, cid := range ids {
				if s, ok := states[cid]; ok {
					c.Rows = append(c.Rows, RowName{cid, Name(ck, s.Values)})
				}
			}
			out.Children = append(out.Children, c)
		}
	}
	return out, nil
}
