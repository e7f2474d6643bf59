package target

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/store"
)

// Row is one created record's row.
type Row struct {
	Kind   ledger.Kind
	ID     int64            // the id its slot names
	Values canon.Values     // its validated fields
	Links  map[string]int64 // link field -> the parent's row id
	Extra  string           // the columns nothing mapped, as JSON; "" for none
}

// columns are each target table's columns as Writer writes them.
var columns = map[ledger.Kind][]string{
	ledger.User:     {"id", "tenant_id", "email", "email_key", "name", "active", "created_at", "extra", "imported_at"},
	ledger.Company:  {"id", "tenant_id", "name", "domain", "domain_key", "phone", "industry", "owner_id", "created_at", "extra", "imported_at"},
	ledger.Contact:  {"id", "tenant_id", "first_name", "last_name", "email", "email_key", "phone", "title", "company_id", "owner_id", "created_at", "extra", "imported_at"},
	ledger.Lead:     {"id", "tenant_id", "first_name", "last_name", "email", "phone", "title", "company_name", "status", "lead_source", "converted_contact_id", "owner_id", "created_at", "extra", "imported_at"},
	ledger.Deal:     {"id", "tenant_id", "name", "amount", "currency", "stage", "status", "pipeline", "close_date", "company_id", "contact_id", "owner_id", "created_at", "extra", "imported_at"},
	ledger.Note:     {"id", "tenant_id", "body", "contact_id", "lead_id", "company_id", "deal_id", "owner_id", "created_at", "extra", "imported_at"},
	ledger.Activity: {"id", "tenant_id", "type", "subject", "body", "due_at", "done", "contact_id", "lead_id", "company_id", "deal_id", "owner_id", "created_at", "extra", "imported_at"},
	ledger.Email:    {"id", "tenant_id", "subject", "body", `"from"`, `"to"`, "sent_at", "contact_id", "lead_id", "company_id", "deal_id", "extra", "imported_at"},
}

// insertSQL inserts n rows of kind. What every row of a batch shares —
// the tenant (?1) and the time of the import (?2) — is bound once; each row
// binds the rest:
//
//	INSERT INTO table (columns) SELECT column1, ?1, column2, …, ?2 FROM (VALUES (?, …), …) WHERE true
//
// The text is built from the constants above only.
func insertSQL(d store.Dialect, k ledger.Kind, n int) string {
	key := insertKey{d, k, n}
	if q, ok := insertTexts.Load(key); ok {
		return q.(string)
	}
	q := buildInsertSQL(d, k, n)
	insertTexts.Store(key, q)
	return q
}

// insertTexts keeps each statement's text once built: a first run asks for
// one per chunk, and the texts of 256 rows are long (store.StatementRows
// keeps them to five sizes per kind).
var insertTexts sync.Map

type insertKey struct {
	d    store.Dialect
	kind ledger.Kind
	n    int
}

// numeric reports whether column c is not text — an id, a link (every
// link field of the table of kinds), a flag: on PostgreSQL, which types an
// untyped parameter of a VALUES list as text, their parameters are cast.
func numeric(c string) bool {
	_, isLink := canon.KindOfLinkField(c)
	return isLink || c == "id" || c == "done" || c == "active"
}

func buildInsertSQL(d store.Dialect, k ledger.Kind, n int) string {
	// cast is how a number's parameter is written: on PostgreSQL, which
	// types an untyped parameter of a VALUES list as text, it is cast;
	// alias names the VALUES list, which PostgreSQL requires of a subquery
	// in FROM.
	var cast, alias string
	switch d {
	case store.SQLite:
		cast, alias = "?", ""
	case store.Postgres:
		cast, alias = "CAST(? AS bigint)", " AS v"
	default:
		panic(d.Untaught("target.buildInsertSQL"))
	}
	cols := columns[k]
	var sel, params []string
	per := 0
	for _, c := range cols {
		switch c {
		case "tenant_id":
			sel = append(sel, "?1")
		case "imported_at":
			sel = append(sel, "?2")
		default:
			per++
			sel = append(sel, fmt.Sprintf("column%d", per))
			p := "?"
			if numeric(c) {
				p = cast
			}
			params = append(params, p)
		}
	}
	tuple := "(" + strings.Join(params, ", ") + ")"
	return "INSERT INTO " + k.Table() + " (" + strings.Join(cols, ", ") + ") SELECT " + strings.Join(sel, ", ") +
		" FROM (VALUES " + strings.TrimSuffix(strings.Repeat(tuple+", ", n), ", ") + ")" + alias + " WHERE true"
}

// rowArgs appends the values of a row, in column order, but for the tenant
// and the time of the import (bound once: insertSQL).
func rowArgs(args []any, r *Row) []any {
	v := r.Values
	link := func(f string) any {
		if id, ok := r.Links[f]; ok {
			return id
		}
		return nil
	}
	args = append(args, r.ID)
	switch r.Kind {
	case ledger.User:
		var active any
		if b, ok := v.Get("active").(bool); ok {
			active = 0
			if b {
				active = 1
			}
		}
		args = append(args, v.Get("email"), nullIfEmpty(canon.EmailKey(v.Text("email"))), v.Get("name"), active, v.Get("created_at"))
	case ledger.Company:
		args = append(args, v.Get("name"), v.Get("domain"), nullIfEmpty(canon.DomainKey(v.Text("domain"))), v.Get("phone"),
			v.Get("industry"), link("owner_id"), v.Get("created_at"))
	case ledger.Contact:
		args = append(args, v.Get("first_name"), v.Get("last_name"), v.Get("email"), nullIfEmpty(canon.EmailKey(v.Text("email"))),
			v.Get("phone"), v.Get("title"), link("company_id"), link("owner_id"), v.Get("created_at"))
	case ledger.Lead:
		args = append(args, v.Get("first_name"), v.Get("last_name"), v.Get("email"), v.Get("phone"), v.Get("title"),
			v.Get("company_name"), v.Get("status"), v.Get("lead_source"), link("converted_contact_id"), link("owner_id"), v.Get("created_at"))
	case ledger.Deal:
		args = append(args, v.Get("name"), v.Get("amount"), v.Get("currency"), v.Get("stage"), v.Get("status"), v.Get("pipeline"), v.Get("close_date"),
			link("company_id"), link("contact_id"), link("owner_id"), v.Get("created_at"))
	case ledger.Note:
		args = append(args, v.Get("body"), link("contact_id"), link("lead_id"), link("company_id"), link("deal_id"), link("owner_id"), v.Get("created_at"))
	case ledger.Activity:
		done := 0
		if b, _ := v.Get("done").(bool); b {
			done = 1
		}
		args = append(args, v.Get("type"), v.Get("subject"), v.Get("body"), v.Get("due_at"), done,
			link("contact_id"), link("lead_id"), link("company_id"), link("deal_id"), link("owner_id"), v.Get("created_at"))
	case ledger.Email:
		args = append(args, v.Get("subject"), v.Get("body"), v.Get("from"), v.Get("to"), v.Get("sent_at"),
			link("contact_id"), link("lead_id"), link("company_id"), link("deal_id"))
	}
	return append(args, nullIfEmpty(r.Extra))
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// chunk is how many rows one insert statement holds.
const chunk = store.MaxStatementRows

// Writer inserts rows inside one transaction, preparing each statement
// (one per kind and number of rows) once.
type Writer struct {
	tx         *sql.Tx
	d          store.Dialect
	tenant     string
	importedAt string
	stmts      map[string]*sql.Stmt
	kept       *store.Kept // nil: each statement prepared in tx
}

// NewWriter writes rows of tenant, imported at importedAt, in tx.
func NewWriter(tx *sql.Tx, d store.Dialect, tenant, importedAt string) *Writer {
	return &Writer{tx: tx, d: d, tenant: tenant, importedAt: importedAt, stmts: map[string]*sql.Stmt{}}
}

// Keeping makes w take its statements from k, kept across a run's
// transactions (store.Kept), and returns it.
func (w *Writer) Keeping(k *store.Kept) *Writer {
	w.kept = k
	return w
}

// Insert writes rows, all of one kind.
func (w *Writer) Insert(ctx context.Context, rows []Row) error {
	if len(rows) > 0 && w.copies(len(rows)) {
		return w.copyRows(ctx, rows)
	}
	for start := 0; start < len(rows); {
		part := rows[start : start+store.StatementRows(min(chunk, len(rows)-start))]
		start += len(part)
		k := part[0].Kind
		q := insertSQL(w.d, k, len(part))
		st, ok := w.stmts[q]
		if !ok {
			var err error
			if st, err = w.kept.Prepare(ctx, w.tx, q); err != nil {
				return fmt.Errorf("prepare insert %s: %w", k.Plural(), err)
			}
			w.stmts[q] = st
		}
		args := make([]any, 0, 2+len(part)*len(columns[k]))
		args = append(args, w.tenant, w.importedAt)
		for i := range part {
			args = rowArgs(args, &part[i])
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// copies tells whether n rows go by the engine's bulk path (copyRows)
// rather than by statements.
func (w *Writer) copies(n int) bool {
	switch w.d {
	case store.SQLite:
		return false // its statements run in the process: nothing to save
	case store.Postgres:
		return n >= store.CopyMin
	default:
		panic(w.d.Untaught("target.Writer.copies"))
	}
}

// copyRows writes rows, all of one kind, by PostgreSQL's COPY
// (store.CopyIn), each row's values those insertSQL's statement binds.
func (w *Writer) copyRows(ctx context.Context, rows []Row) error {
	k := rows[0].Kind
	cols := columns[k]
	values := make([][]any, len(rows))
	var args []any
	for i := range rows {
		args = rowArgs(args[:0], &rows[i])
		v := make([]any, 0, len(cols))
		next := 0
		for _, c := range cols {
			switch c {
			case "tenant_id":
				v = append(v, w.tenant)
			case "imported_at":
				v = append(v, w.importedAt)
			default:
				v = append(v, args[next])
				next++
			}
		}
		values[i] = v
	}
	if err := store.CopyIn(ctx, w.tx, k.Table(), cols, values); err != nil {
		return fmt.Errorf("insert %s: %w", k.Plural(), err)
	}
	return nil
}

// Close lets go of the prepared statements.
func (w *Writer) Close() {
	for q, s := range w.stmts {
		s.Close()
		delete(w.stmts, q)
	}
}

// IDs gives out the row ids of kind's table inside a write transaction,
// from its allocator (store: never max(id) + 1, so that an id is never
// given again once its row is deleted). Save them before the commit.
func IDs(ctx context.Context, d store.Dialect, tx *sql.Tx, k ledger.Kind) (*store.IDs, error) {
	return d.TakeIDs(ctx, tx, k.Table())
}

// NextID is the row id kind's allocator gives out next.
func NextID(ctx context.Context, d store.Dialect, tx *sql.Tx, k ledger.Kind) (int64, error) {
	return d.NextID(ctx, tx, k.Table())
}

// AdvanceIDs makes kind's allocator give out ids past id only (ledger
// load, past the rows it writes).
func AdvanceIDs(ctx context.Context, d store.Dialect, tx *sql.Tx, k ledger.Kind, id int64) error {
	return d.AdvanceIDs(ctx, tx, k.Table(), id)
}

// Querier is a *sql.DB or a *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}
