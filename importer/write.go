package importer

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"crmimport/ledger"
)

// The target rows. Each statement is called only from inside
// ledger.Record (R1), so a row never exists without its slot.

const insertCompanySQL = `
INSERT INTO companies (tenant_id, name, domain, domain_key, phone, industry, created_at, extra, imported_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

const insertContactSQL = `
INSERT INTO contacts (tenant_id, first_name, last_name, email, email_key, phone, title, company_id, created_at, extra, imported_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const insertDealSQL = `
INSERT INTO deals (tenant_id, name, amount, currency, stage, close_date, company_id, contact_id, created_at, extra, imported_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const insertNoteSQL = `
INSERT INTO notes (tenant_id, body, contact_id, company_id, deal_id, created_at, extra, imported_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

const insertActivitySQL = `
INSERT INTO activities (tenant_id, type, subject, body, due_at, done, contact_id, company_id, deal_id, created_at, extra, imported_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const insertEmailSQL = `
INSERT INTO emails (tenant_id, subject, body, "from", "to", sent_at, contact_id, company_id, deal_id, extra, imported_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// row is one target row ready to insert.
type row struct {
	tenant   string
	kind     ledger.Kind
	values   Values
	links    map[string]int64 // link field -> resolved target id
	extra    map[string]any
	imported string
}

func (r row) link(f string) any {
	if id, ok := r.links[f]; ok {
		return id
	}
	return nil
}

func (r row) extraJSON() (any, error) {
	if len(r.extra) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(r.extra)
	return string(b), err
}

func emailKey(v any) any {
	if s, ok := v.(string); ok {
		if k := ledger.EmailKey(s); k != "" {
			return k
		}
	}
	return nil
}

func domainKey(v any) any {
	if s, ok := v.(string); ok {
		if k := ledger.DomainKey(s); k != "" {
			return k
		}
	}
	return nil
}

// statements holds a batch's prepared inserts.
type statements struct {
	tx    *sql.Tx
	stmts map[ledger.Kind]*sql.Stmt
}

func (s *statements) close() {
	for k, st := range s.stmts {
		st.Close()
		delete(s.stmts, k)
	}
}

func insertSQL(k ledger.Kind) string {
	switch k {
	case ledger.Company:
		return insertCompanySQL
	case ledger.Contact:
		return insertContactSQL
	case ledger.Deal:
		return insertDealSQL
	case ledger.Note:
		return insertNoteSQL
	case ledger.Activity:
		return insertActivitySQL
	default:
		return insertEmailSQL
	}
}

// insert writes r and returns its id. It is a ledger.WriteFunc body.
func (s *statements) insert(ctx context.Context, r row) (int64, error) {
	st, ok := s.stmts[r.kind]
	if !ok {
		var err error
		if st, err = s.tx.PrepareContext(ctx, insertSQL(r.kind)); err != nil {
			return 0, fmt.Errorf("prepare insert %s: %w", r.kind, err)
		}
		if s.stmts == nil {
			s.stmts = map[ledger.Kind]*sql.Stmt{}
		}
		s.stmts[r.kind] = st
	}
	extra, err := r.extraJSON()
	if err != nil {
		return 0, err
	}
	v := r.values
	var args []any
	switch r.kind {
	case ledger.Company:
		args = []any{r.tenant, v["name"], v["domain"], domainKey(v["domain"]), v["phone"], v["industry"], v["created_at"]}
	case ledger.Contact:
		args = []any{r.tenant, v["first_name"], v["last_name"], v["email"], emailKey(v["email"]), v["phone"], v["title"],
			r.link("company_id"), v["created_at"]}
	case ledger.Deal:
		args = []any{r.tenant, v["name"], v["amount"], v["currency"], v["stage"], v["close_date"],
			r.link("company_id"), r.link("contact_id"), v["created_at"]}
	case ledger.Note:
		args = []any{r.tenant, v["body"], r.link("contact_id"), r.link("company_id"), r.link("deal_id"), v["created_at"]}
	case ledger.Activity:
		done := 0
		if b, _ := v["done"].(bool); b {
			done = 1
		}
		args = []any{r.tenant, v["type"], v["subject"], v["body"], v["due_at"], done,
			r.link("contact_id"), r.link("company_id"), r.link("deal_id"), v["created_at"]}
	case ledger.Email:
		args = []any{r.tenant, v["subject"], v["body"], v["from"], v["to"], v["sent_at"],
			r.link("contact_id"), r.link("company_id"), r.link("deal_id")}
	}
	args = append(args, extra, r.imported)
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

const insertFailureSQL = `
INSERT INTO record_failures (migration_id, task_id, kind, source_id, file, line, reason, raw)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

// recordFailure writes a failed record (R4), in the batch's transaction.
func recordFailure(ctx context.Context, tx *sql.Tx, runID, taskID int64, r Record, reason string) error {
	_, err := tx.ExecContext(ctx, insertFailureSQL, runID, taskID, string(r.Kind), nullIfEmpty(r.ID), r.File, r.Line, reason, r.Raw)
	if err != nil {
		return fmt.Errorf("record failure of %s %s: %w", r.Kind, r.ID, err)
	}
	return nil
}
