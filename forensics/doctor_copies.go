package forensics

import (
	"fmt"

	"crmimport/store"
)

// dryRunCopies: on PostgreSQL, a dry run works on a copy of the schema and
// drops it as it ends; one killed left it behind, a copy of every tenant's
// data that nothing mentioned (issue 23 item 22). The copies of this
// schema that no live dry run owns (store.LeftCopies) are one finding of
// the whole database, with the statement that drops each; the next dry run
// of the schema drops them too.
func (d *doctor) dryRunCopies() error {
	left, err := store.LeftCopies(d.ctx, d.db)
	if err != nil {
		return fmt.Errorf("doctor: %w", err)
	}
	for _, c := range left {
		f := d.finding(DryRunCopies, "")
		f.Count++
		f.example(c.Schema)
		f.Details = append(f.Details, c.String())
		cmd, err := d.psql(c.Drop())
		if err != nil {
			return fmt.Errorf("doctor: %w", err)
		}
		f.repair(cmd, "drops the copy (the next dry run of this schema drops it too)")
	}
	return nil
}
