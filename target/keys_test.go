package target_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/store/storetest"
	"crmimport/target"
)

// TestNaturalKeys: R5, natural keys of the tenant's rows, the oldest row
// per key, never another tenant's, never an empty key.
func TestNaturalKeys(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		_, err := db.Exec(`INSERT INTO contacts (id, tenant_id, email, email_key, imported_at) VALUES
		(10, 'acme', 'Ann@Example.com', 'ann@example.com', 'now'),
		(11, 'acme', 'ann@example.com', 'ann@example.com', 'now'),
		(12, 'globex', 'bob@example.com', 'bob@example.com', 'now'),
		(13, 'acme', '', NULL, 'now')`)
		require.NoError(t, err)
		_, err = db.Exec(`INSERT INTO companies (id, tenant_id, name, domain, domain_key, imported_at) VALUES
		(20, 'acme', 'Acme', 'https://www.Acme.example/about', 'acme.example', 'now')`)
		require.NoError(t, err)
		emails := map[string]int64{}
		require.NoError(t, target.LoadEmailKeys(ctx, db, "acme", func(k string, id int64) { emails[k] = id }))
		require.Equal(t, map[string]int64{"ann@example.com": 10}, emails)
		domains := map[string]int64{}
		require.NoError(t, target.LoadDomainKeys(ctx, db, "acme", func(k string, id int64) { domains[k] = id }))
		require.Equal(t, map[string]int64{"acme.example": 20}, domains)
		require.Equal(t, canon.DomainKey("http://acme.EXAMPLE"), "acme.example")
	})
}
