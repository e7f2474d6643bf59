package target

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/store"
)

// Updates of changed records (R17, SPEC §11). A row is updated in place —
// the same id, every column Insert writes but its id, tenant and time of
// import — and an undo gives it back the values it had before (Restore).
// Both are compare-and-sets on the row's id and tenant whose affected rows
// are counted (R11).

// written are the columns of kind k that an update writes: Insert's, but
// for the id, the tenant and the time of the import.
func written(k ledger.Kind) []string {
	var out []string
	for _, c := range columns[k] {
		switch c {
		case "id", "tenant_id", "imported_at":
		default:
			out = append(out, c)
		}
	}
	return out
}

// columnName is a column's name without its quotes ("from").
func columnName(c string) string { return strings.Trim(c, `"`) }

// State is a row as it is now: the columns an update writes, by name, and
// whether it is a dump's placeholder (SPEC §5 ledger load), whose values
// are no export's.
type State struct {
	Values      map[string]any
	Placeholder bool
}

// Extra is the row's extra, as JSON ("" for none).
func (s State) Extra() string {
	e, _ := s.Values["extra"].(string)
	return e
}

// Link is the row's link column field (a parent's row id), 0 for none.
func (s State) Link(field string) int64 {
	n, _ := s.Values[field].(int64)
	return n
}

// ReadRow reads row id of kind k (tenant's) as it is now; found is false
// when there is none.
func ReadRow(ctx context.Context, q Querier, k ledger.Kind, tenant string, id int64) (State, bool, error) {
	got := map[int64]State{}
	err := readRows(ctx, q, k, "id = ?", []any{id, tenant}, got)
	s, found := got[id]
	return s, found, err
}

// ReadRows reads rows ids of kind k (tenant's) as they are now, in one
// statement (the ids as one JSON array, unpacked by dialect d's own
// function), by id; a row that is not there is not in the map.
func ReadRows(ctx context.Context, q Querier, d store.Dialect, k ledger.Kind, tenant string, ids []int64) (map[int64]State, error) {
	got := make(map[int64]State, len(ids))
	if len(ids) == 0 {
		return got, nil
	}
	b, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	var in string
	switch d {
	case store.SQLite:
		in = "id IN (SELECT value FROM json_each(?))"
	case store.Postgres:
		in = "id IN (SELECT CAST(jsonb_array_elements_text(CAST(? AS jsonb)) AS bigint))"
	default:
		panic(d.Untaught("target.ReadRows"))
	}
	return got, readRows(ctx, q, k, in, []any{string(b), tenant}, got)
}

// readRows reads the rows of kind k that where selects (its arguments,
// then the tenant's) into got.
func readRows(ctx context.Context, q Querier, k ledger.Kind, where string, args []any, got map[int64]State) error {
	rows, err := q.QueryContext(ctx, "SELECT "+stateColumns(k)+" FROM "+k.Table()+
		" WHERE "+where+" AND tenant_id = ?", args...)
	if err != nil {
		return fmt.Errorf("read %s: %w", k.Plural(), err)
	}
	defer rows.Close()
	if err := scanStates(rows, k, got); err != nil {
		return fmt.Errorf("read %s: %w", k.Plural(), err)
	}
	return nil
}

// stateColumns are the columns scanStates reads, in its order.
func stateColumns(k ledger.Kind) string {
	return "id, " + strings.Join(written(k), ", ") + ", from_dump"
}

// scanStates reads rows of stateColumns(k) into got, by id.
func scanStates(rows *sql.Rows, k ledger.Kind, got map[int64]State) error {
	cols := written(k)
	for rows.Next() {
		var id int64
		vals := make([]any, len(cols)+1)
		ptrs := make([]any, len(vals)+1)
		ptrs[0] = &id
		for i := range vals {
			ptrs[i+1] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		s := State{Values: make(map[string]any, len(cols))}
		for i, c := range cols {
			s.Values[columnName(c)] = plain(vals[i])
		}
		fromDump, _ := plain(vals[len(cols)]).(int64)
		s.Placeholder = fromDump == 1
		got[id] = s
	}
	return rows.Err()
}

// plain is a scanned value as text, an integer or nil.
func plain(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case int32:
		return int64(x)
	case int:
		return int64(x)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	}
	return v
}

// Update writes r over its row (the same id, tenant's), which held before
// (as ReadRow read it), in tx.
func Update(ctx context.Context, tx Execer, tenant string, r *Row, before State) error {
	cols := written(r.Kind)
	args := rowArgs(nil, r)[1:] // rowArgs' first is the id
	if len(args) != len(cols) {
		return fmt.Errorf("update %s %d: %d values for %d columns", r.Kind, r.ID, len(args), len(cols))
	}
	// Only the columns whose values change are set: an index or a foreign
	// key of a column left alone is not written again.
	var set []string
	var vals []any
	for i, c := range cols {
		if !sameValue(before.Values[columnName(c)], args[i]) {
			set, vals = append(set, c), append(vals, args[i])
		}
	}
	if len(set) == 0 {
		return nil // the row holds them already (a hand edit made it so)
	}
	return setRow(ctx, tx, r.Kind, tenant, r.ID, set, vals, "update")
}

// sameValue reports whether a row's value (as ReadRow read it) and a value
// to write are the same: text as text, a number as a number, nil as nil.
func sameValue(had, v any) bool {
	switch x := v.(type) {
	case nil:
		return had == nil
	case int:
		return had == int64(x)
	case bool:
		n := int64(0)
		if x {
			n = 1
		}
		return had == n
	case string:
		h, ok := had.(string)
		return ok && h == x
	case int64:
		return had == x
	}
	return false
}

// Restore gives row id of kind k the values it had (as ReadRow read them:
// an update's before-image), in tx.
func Restore(ctx context.Context, tx Execer, k ledger.Kind, tenant string, id int64, values map[string]any) error {
	cols := written(k)
	args := make([]any, len(cols))
	for i, c := range cols {
		v, ok := values[columnName(c)]
		// A before-image kept before the table gained a column (schema
		// 17: a deal's status and pipeline; 18: an owner) holds none of
		// them, and the row had none then: they are restored empty.
		if !ok && !slices.Contains(canon.AddedFields(k), columnName(c)) {
			return fmt.Errorf("restore %s %d: its before-image has no %s", k, id, columnName(c))
		}
		args[i] = v
	}
	return setRow(ctx, tx, k, tenant, id, cols, args, "restore")
}

func setRow(ctx context.Context, tx Execer, k ledger.Kind, tenant string, id int64, cols []string, args []any, what string) error {
	set := make([]string, len(cols))
	for i, c := range cols {
		set[i] = c + " = ?"
	}
	res, err := tx.ExecContext(ctx, "UPDATE "+k.Table()+" SET "+strings.Join(set, ", ")+" WHERE id = ? AND tenant_id = ?",
		append(args, id, tenant)...)
	if err != nil {
		return fmt.Errorf("%s %s %d: %w", what, k, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s %s %d: %w", what, k, id, err)
	}
	if n != 1 {
		return fmt.Errorf("%s %s %d: %d rows changed, expected 1 (R11)", what, k, id, n)
	}
	return nil
}

// Unlinked is row s of kind k with the links given empty again and the value kept
// for each put back in its extra (SPEC §4 step 7), as it was before they
// were completed (R6a).
func Unlinked(k ledger.Kind, s State, links []ledger.PendingLink) (State, error) {
	if len(links) == 0 {
		return s, nil
	}
	out := State{Values: make(map[string]any, len(s.Values)), Placeholder: s.Placeholder}
	for k, v := range s.Values {
		out.Values[k] = v
	}
	extra := map[string]any{}
	if e := s.Extra(); e != "" {
		if err := json.Unmarshal([]byte(e), &extra); err != nil {
			return s, fmt.Errorf("a row's extra: %w", err)
		}
	}
	for _, l := range links {
		out.Values[linkColumn(k, l.Field)] = nil
		if l.Kept != "" {
			extra[l.Field] = l.Kept
		}
	}
	if len(extra) == 0 {
		out.Values["extra"] = nil
		return out, nil
	}
	b, err := json.Marshal(extra)
	if err != nil {
		return s, err
	}
	out.Values["extra"] = string(b)
	return out, nil
}

// EncodeState writes a row's values as JSON, for a before-image.
func EncodeState(s State) (string, error) {
	b, err := json.Marshal(s.Values)
	return string(b), err
}

// DecodeState reads what EncodeState wrote: numbers as integers (ids,
// flags), text as text.
func DecodeState(text string) (map[string]any, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("a before-image: %w", err)
	}
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			i, err := n.Int64()
			if err != nil {
				return nil, fmt.Errorf("a before-image: %s: %w", k, err)
			}
			m[k] = i
		}
	}
	return m, nil
}

// ParentSourceIDs are the source ids of the final slots (of tenant and
// source) that name row id of kind k: what a link to it says in the
// export's terms (R17: links are hashed as the parents' source ids).
func ParentSourceIDs(ctx context.Context, q Querier, tenant, source string, k ledger.Kind, id int64) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT source_id FROM migration_records
WHERE record_type = ? AND record_id = ? AND tenant_id = ? AND source = ? AND kind = ? AND action IN ('created', 'matched')`,
		k.Table(), id, tenant, source, string(k))
	if err != nil {
		return nil, fmt.Errorf("read the slots of %s %d: %w", k, id, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
