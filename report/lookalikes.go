package report

import (
	"context"
	"database/sql"
	"fmt"

	"crmimport/importer/profile"
)

// lookalikesSQL reads the warnings a run's tasks wrote for kinds whose id
// is made of columns (SPEC §4): the records no longer in the export paired
// with the new ones that look like them, one warning per task.
const lookalikesSQL = `SELECT message FROM run_log WHERE migration_id = ? AND level = 'warning' AND message LIKE ? ORDER BY id`

func readLookalikes(ctx context.Context, db *sql.DB, runID int64) ([]string, error) {
	rows, err := db.QueryContext(ctx, lookalikesSQL, runID, profile.LookalikesNote+"%")
	if err != nil {
		return nil, fmt.Errorf("read the records that look like new ones: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return nil, fmt.Errorf("read the records that look like new ones: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
