package undo

import (
	"context"

	"crmimport/phases"
)

// BuildPaged is Build reading page slots at a time: the tests walk a plan
// across many pages to check that paging changes nothing.
func BuildPaged(ctx context.Context, q Querier, e *phases.Engine, id int64, cascade bool, page int) (*Plan, error) {
	return build(ctx, q, e, id, cascade, 0, page, nil)
}
