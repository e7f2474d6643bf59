package target

import (
	"context"
	"fmt"
)

// emailKeysSQL: R5, a contact is found by its email key among the tenant's
// rows, from any source; with several, the oldest.
const emailKeysSQL = `
SELECT email_key, min(id) FROM contacts WHERE tenant_id = ? AND email_key IS NOT NULL GROUP BY email_key`

// LoadEmailKeys calls add for every email key of the tenant's contacts with
// the oldest contact that has it.
func LoadEmailKeys(ctx context.Context, q Querier, tenant string, add func(key string, id int64)) error {
	return each(ctx, q, "read email keys", emailKeysSQL, add, tenant)
}

// userKeysSQL: R5, a user is found by the email key of the user.
const userKeysSQL = `
SELECT email_key, min(id) FROM users WHERE tenant_id = ? AND email_key IS NOT NULL GROUP BY email_key`

// LoadUserKeys calls add for every email key of the tenant's users with
// the oldest user that has it: one person is one user, whichever export
// named them (SPEC §4).
func LoadUserKeys(ctx context.Context, q Querier, tenant string, add func(key string, id int64)) error {
	return each(ctx, q, "read users' email keys", userKeysSQL, add, tenant)
}

// domainKeysSQL: R5, a company is found by its domain key.
const domainKeysSQL = `
SELECT domain_key, min(id) FROM companies WHERE tenant_id = ? AND domain_key IS NOT NULL GROUP BY domain_key`

// LoadDomainKeys calls add for every domain key of the tenant's companies
// with the oldest company that has it.
func LoadDomainKeys(ctx context.Context, q Querier, tenant string, add func(key string, id int64)) error {
	return each(ctx, q, "read domain keys", domainKeysSQL, add, tenant)
}

func each(ctx context.Context, q Querier, what, query string, add func(string, int64), args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var id int64
		if err := rows.Scan(&k, &id); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		add(k, id)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
