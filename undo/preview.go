package undo

// Preview is a plan as --dry-run and the desktop show it: per kind what the
// undo would take back, the same per run, the dependents (taken back too
// under cascade), the notices, and the plan's digest, which the undo that
// confirms it carries (--plan, the page's POST).
type Preview struct {
	DryRun     bool                     `json:"dry_run"`
	Undoes     int64                    `json:"undoes"`
	Tenant     string                   `json:"tenant"`
	Source     string                   `json:"source"`
	Cascade    bool                     `json:"cascade"`
	Loaded     bool                     `json:"loaded_from_dump"`
	Total      int                      `json:"total"`
	Plan       string                   `json:"plan"`
	Kinds      map[string]PreviewCounts `json:"kinds"`
	Parts      []PlanPart               `json:"parts"`
	Dependents []Dependent              `json:"dependents"`
	Notices    []string                 `json:"notices"`
}

// PreviewCounts are what the undo would do to one kind's slots, and how
// many of its rows it would give their values before an update back
// (reverted, R17).
type PreviewCounts struct {
	Removed  int64 `json:"removed"`
	Released int64 `json:"released"`
	Restored int64 `json:"restored"`
	Cleared  int64 `json:"cleared"`
	Reverted int64 `json:"reverted"`
}

// Preview is the plan as --dry-run shows it.
func (p *Plan) Preview() Preview {
	v := Preview{DryRun: true, Undoes: p.Run.ID, Tenant: p.Run.Tenant, Source: p.Run.Source, Cascade: p.Cascade,
		Loaded: p.Loaded, Total: p.Total(), Plan: p.Digest, Kinds: map[string]PreviewCounts{}, Parts: p.Parts,
		Dependents: p.Dependents, Notices: p.Notices}
	for k, c := range p.Counts {
		if c.TakenBack()+c.Reverted == 0 {
			continue // only links emptied again (R6a): a notice says them
		}
		v.Kinds[string(k)] = PreviewCounts{Removed: c.Removed, Released: c.Released, Restored: c.Restored, Cleared: c.Cleared,
			Reverted: c.Reverted}
	}
	if v.Parts == nil {
		v.Parts = []PlanPart{}
	}
	if v.Dependents == nil {
		v.Dependents = []Dependent{}
	}
	if v.Notices == nil {
		v.Notices = []string{}
	}
	return v
}
