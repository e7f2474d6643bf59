package phases

import (
	"context"
	"fmt"
)

// TenantRuns is one tenant of the runs table: the workspace its runs
// import into (SPEC §1), how many runs it has, and its latest.
type TenantRuns struct {
	Tenant  string `json:"tenant"`
	Runs    int64  `json:"runs"`
	LastRun int64  `json:"last_run"`
}

// tenantsSQL: every tenant that a run names, by name. A tenant is made by
// its first run (R10: the run row carries it); there is no table of
// tenants, so the runs are the list.
const tenantsSQL = `SELECT tenant_id, count(*), max(id) FROM migrations GROUP BY tenant_id ORDER BY tenant_id`

// Tenants reads every tenant that has a run, by name.
func Tenants(ctx context.Context, q queryer) ([]TenantRuns, error) {
	rows, err := q.QueryContext(ctx, tenantsSQL)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	defer rows.Close()
	out := []TenantRuns{}
	for rows.Next() {
		var t TenantRuns
		if err := rows.Scan(&t.Tenant, &t.Runs, &t.LastRun); err != nil {
			return nil, fmt.Errorf("list tenants: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
