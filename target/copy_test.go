package target_test

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/store"
	"crmimport/store/storetest"
	"crmimport/target"
)

// copyRows is how many rows of each kind the tests below write at once:
// enough for PostgreSQL's COPY (store.CopyMin).
const copyRows = 2 * store.CopyMin

// sampleValues are one row's fields of each kind, before validation; n
// makes them differ from row to row.
func sampleValues(k ledger.Kind, n int) map[string]string {
	who := fmt.Sprintf("p%d", n)
	switch k {
	case ledger.User:
		return map[string]string{"email": who + "@example.com", "name": "User " + who, "active": strconv.FormatBool(n%2 == 0), "created_at": "2026-01-05"}
	case ledger.Company:
		return map[string]string{"name": "Acme " + who, "domain": "https://www." + who + ".example.com/", "phone": "+1 555 0100", "industry": "Retail"}
	case ledger.Contact:
		return map[string]string{"first_name": "Ann\t" + who, "last_name": `O"Brien`, "email": " " + who + "@Example.com", "title": "CFO"}
	case ledger.Lead:
		return map[string]string{"first_name": "Lee", "last_name": who, "email": who + "@example.com", "company_name": "Initech", "lead_source": "Fair"}
	case ledger.Deal:
		return map[string]string{"name": "Deal " + who, "amount": strconv.Itoa(100*n) + ".50", "currency": "EUR", "close_date": "2026-03-01"}
	case ledger.Note:
		return map[string]string{"body": "Called " + who + "; said \"hi\"\nand \\ left", "created_at": "2026-02-01"}
	case ledger.Activity:
		return map[string]string{"type": "call", "subject": "Call " + who, "body": "ç'est ça", "done": strconv.FormatBool(n%3 == 0)}
	case ledger.Email:
		return map[string]string{"subject": "Re: " + who, "body": "Hello", "from": "a@example.com", "to": who + "@example.com", "sent_at": "2026-02-02"}
	}
	panic("no sample values for " + string(k))
}

// sampleRows are n rows of every kind, parents first, for tenant's
// numbering: ids from base+1, each child linking to parents among the
// first five of their kind (none for one row in four) and one row in
// three with an extra column.
func sampleRows(t *testing.T, base int64, n int) [][]target.Row {
	t.Helper()
	var all [][]target.Row
	for _, k := range canon.Kinds() {
		rows := make([]target.Row, n)
		for i := range rows {
			vals := sampleValues(k, i)
			vals["id"] = fmt.Sprintf("x%d", i)
			v, bad := canon.Validate(k, valuesOf(k, vals))
			require.Empty(t, bad, "%s %d", k, i)
			r := target.Row{Kind: k, ID: base + int64(i) + 1, Values: v, Links: map[string]int64{}}
			if i%4 != 0 {
				for _, f := range canon.FieldsOf(k).Names {
					if _, ok := canon.KindOfLinkField(f); ok && f != "converted_contact_id" {
						r.Links[f] = base + int64(i%5) + 1
					}
				}
			}
			if i%3 == 0 {
				r.Extra = fmt.Sprintf(`{"Lead Source":"Fair %d"}`, i)
			}
			rows[i] = r
		}
		all = append(all, rows)
	}
	return all
}

// tableRows reads tenant's rows of kind as text, column by column, each id
// and link taken modulo 1000 (the tests number their tenants' rows from
// 0 and 1000).
func tableRows(t *testing.T, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, k ledger.Kind, tenant string) []string {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), `SELECT * FROM `+k.Table()+` WHERE tenant_id = ? ORDER BY id`, tenant)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		var b strings.Builder
		for i, c := range cols {
			v := vals[i].String
			_, isLink := canon.KindOfLinkField(c)
			switch {
			case c == "tenant_id":
				v = "·"
			case !vals[i].Valid:
				v = "NULL"
			case c == "id" || isLink:
				n, err := strconv.ParseInt(v, 10, 64)
				require.NoError(t, err)
				v = strconv.FormatInt(n%1000, 10)
			}
			fmt.Fprintf(&b, "%s=%s|", c, v)
		}
		out = append(out, b.String())
	}
	require.NoError(t, rows.Err())
	return out
}

// beginWrite begins a write transaction on db, rolled back when the test
// ends unless committed.
func beginWrite(t *testing.T, db *sql.DB) (context.Context, store.Dialect, *sql.Tx) {
	t.Helper()
	ctx := context.Background()
	tx, err := store.Begin(ctx, db)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	return ctx, store.DialectOf(db), tx
}

// TestCopiedRowsAreTheStatementsRows (issue 28): rows written many at once
// — by COPY on PostgreSQL (store.CopyIn) — are, column for column, the
// rows the insert statement writes one at a time: every kind, its links
// and NULLs, its flags, its extra, a column named "from", text with tabs,
// quotes, backslashes and new lines.
func TestCopiedRowsAreTheStatementsRows(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx, d, tx := beginWrite(t, db)
		together := target.NewWriter(tx, d, "together", "2026-12-01T00:00:00Z")
		defer together.Close()
		alone := target.NewWriter(tx, d, "alone", "2026-12-01T00:00:00Z")
		defer alone.Close()
		for _, rows := range sampleRows(t, 0, copyRows) {
			require.NoError(t, together.Insert(ctx, rows))
		}
		for _, rows := range sampleRows(t, 1000, copyRows) {
			for _, r := range rows {
				require.NoError(t, alone.Insert(ctx, []target.Row{r}))
			}
		}
		for _, k := range canon.Kinds() {
			got := tableRows(t, tx, k, "together")
			require.Len(t, got, copyRows, k)
			require.Equal(t, tableRows(t, tx, k, "alone"), got, k)
		}
	})
}

// TestCopiedRowRefused: a row the table refuses (a link to a company that
// is not there) fails the whole write, as a constraint — which the importer
// takes for one record's fault, and redoes its chunk record by record (R4)
// — naming the column; nothing of the write is left, and the transaction
// goes on from its savepoint.
func TestCopiedRowRefused(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx, d, tx := beginWrite(t, db)
		w := target.NewWriter(tx, d, "acme", "2026-12-01T00:00:00Z")
		defer w.Close()
		rows := sampleRows(t, 0, copyRows)
		for _, rs := range rows[:2] { // users, companies
			require.Equal(t, ledger.Company, rows[1][0].Kind)
			require.NoError(t, w.Insert(ctx, rs))
		}
		contacts := rows[2]
		require.Equal(t, ledger.Contact, contacts[0].Kind)
		contacts[copyRows-3].Links["company_id"] = 999
		err := store.Try(ctx, tx, func() error { return w.Insert(ctx, contacts) })
		require.Error(t, err)
		require.True(t, store.IsConstraint(err), "a refused row is a constraint: %v", err)
		require.False(t, store.IsPrimaryKey(err), "%v", err)
		if d == store.Postgres { // SQLite's refusal names no column
			require.Contains(t, err.Error(), "contacts.company_id")
		}
		require.Empty(t, tableRows(t, tx, ledger.Contact, "acme"), "nothing of the refused write is left")
		contacts[copyRows-3].Links["company_id"] = 1
		require.NoError(t, w.Insert(ctx, contacts), "the transaction goes on")
		require.Len(t, tableRows(t, tx, ledger.Contact, "acme"), copyRows)
		require.NoError(t, tx.Commit())
	})
}
