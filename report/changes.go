package report

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"crmimport/importer/runopts"
	"crmimport/ledger"
	"crmimport/phases"
)

// Changes at the source (R17, SPEC §11): what a run found changed since
// its records were imported, as record_changes holds it — per kind how
// many of each change, a few examples with the fields that changed, and
// the command that applies what can be applied.

// changeOrder is the order a kind's changes are told in.
var changeOrder = []string{ledger.ChangeOutdated, ledger.ChangeConflict, ledger.ChangeDeletedSince, ledger.ChangeUpdated, ledger.ChangeOverwritten,
	ledger.ChangeRemovedEdited}

// maxChangeExamples is how many examples a kind keeps per change.
const maxChangeExamples = 5

// FieldChange is one field of a changed record: its value as last
// imported, and in the source now. Both are data from an export: text,
// never markup.
type FieldChange struct {
	Field  string `json:"field"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Change is one record a run found changed at the source.
type Change struct {
	SourceID   string        `json:"source_id"`
	Change     string        `json:"change"`
	File       string        `json:"file,omitempty"`
	Line       int64         `json:"line,omitempty"`
	Applicable bool          `json:"applicable"`
	Fields     []string      `json:"fields"`
	Edited     []string      `json:"edited,omitempty"` // fields edited by hand in the row since import
	Values     []FieldChange `json:"values,omitempty"` // the fields that changed, before and after
}

// KindChanges are one kind's changes at the source in a run.
type KindChanges struct {
	Kind ledger.Kind `json:"kind"`
	// Counts per change (record_changes.change), and how many outdated
	// records `run --update` would apply.
	Outdated     int64 `json:"outdated"`
	Conflict     int64 `json:"conflict"`
	DeletedSince int64 `json:"deleted_since"`
	Updated      int64 `json:"updated"`
	Overwritten  int64 `json:"overwritten"`
	// RemovedEdited are an undo's: rows it removed that had been edited
	// by hand since they were written (the edits went with them).
	RemovedEdited int64 `json:"removed_edited,omitempty"`
	Applicable    int64 `json:"applicable"`
	// Edited are the fields edited by hand in the kind's conflicts.
	Edited []string `json:"edited"`
	// Examples are up to five records per change, in changeOrder.
	Examples []Change `json:"examples"`
}

// count is the kind's count of change c.
func (k *KindChanges) count(c string) *int64 {
	switch c {
	case ledger.ChangeOutdated:
		return &k.Outdated
	case ledger.ChangeConflict:
		return &k.Conflict
	case ledger.ChangeDeletedSince:
		return &k.DeletedSince
	case ledger.ChangeUpdated:
		return &k.Updated
	case ledger.ChangeOverwritten:
		return &k.Overwritten
	case ledger.ChangeRemovedEdited:
		return &k.RemovedEdited
	}
	return nil
}

// changeCountsSQL: per kind and change, how many records the run found
// changed, and how many of them `run --update` would apply (R17).
const changeCountsSQL = `
SELECT kind, change, count(*), coalesce(sum(applicable), 0)
FROM record_changes WHERE migration_id = ? GROUP BY kind, change`

// changeExamplesSQL: the first records of each kind and change, by
// source id (R17: the run page's examples). The window numbers the ids
// alone; only the examples' values are read (a delta rerun lists tens of
// thousands of changes, each with its before and after).
const changeExamplesSQL = `
SELECT c.kind, c.change, c.source_id, coalesce(c.file, ''), coalesce(c.line, 0), c.applicable,
       coalesce(c.fields, '[]'), coalesce(c.edited, '[]'), coalesce(c.before, '{}'), coalesce(c.after, '{}')
FROM (SELECT id, row_number() OVER (PARTITION BY kind, change ORDER BY source_id, id) AS i
      FROM record_changes WHERE migration_id = ?) AS e
JOIN record_changes c ON c.id = e.id
WHERE e.i <= ?
ORDER BY c.kind, c.change, c.source_id, c.id`

// readChanges reads what run found changed at the source, per kind in
// plan order (the order of kinds).
func readChanges(ctx context.Context, db *sql.DB, runID int64, kinds []ledger.Kind) ([]KindChanges, error) {
	by := map[ledger.Kind]*KindChanges{}
	get := func(k string) *KindChanges {
		kind := ledger.Kind(k)
		if by[kind] == nil {
			by[kind] = &KindChanges{Kind: kind, Edited: []string{}, Examples: []Change{}}
		}
		return by[kind]
	}
	rows, err := db.QueryContext(ctx, changeCountsSQL, runID)
	if err != nil {
		return nil, fmt.Errorf("read the changes at the source of run %d: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, c string
		var n, applicable int64
		if err := rows.Scan(&k, &c, &n, &applicable); err != nil {
			return nil, fmt.Errorf("read the changes at the source of run %d: %w", runID, err)
		}
		kc := get(k)
		if p := kc.count(c); p != nil {
			*p = n
		}
		if c == ledger.ChangeOutdated {
			kc.Applicable += applicable
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(by) == 0 {
		return nil, nil
	}
	if err := readChangeExamples(ctx, db, runID, get); err != nil {
		return nil, err
	}
	var out []KindChanges
	for _, k := range kinds {
		if kc := by[k]; kc != nil {
			out = append(out, *kc)
			delete(by, k)
		}
	}
	rest := make([]string, 0, len(by)) // a kind the run did not read (none today): still told
	for k := range by {
		rest = append(rest, string(k))
	}
	sort.Strings(rest)
	for _, k := range rest {
		out = append(out, *by[ledger.Kind(k)])
	}
	return out, nil
}

// readChangeExamples reads up to maxChangeExamples examples per kind and change into
// the kinds get gives.
func readChangeExamples(ctx context.Context, db *sql.DB, runID int64, get func(string) *KindChanges) error {
	rows, err := db.QueryContext(ctx, changeExamplesSQL, runID, maxChangeExamples)
	if err != nil {
		return fmt.Errorf("read the changed records of run %d: %w", runID, err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	for rows.Next() {
		var k, fields, edited, before, after string
		var c Change
		if err := rows.Scan(&k, &c.Change, &c.SourceID, &c.File, &c.Line, &c.Applicable, &fields, &edited, &before, &after); err != nil {
			return fmt.Errorf("read the changed records of run %d: %w", runID, err)
		}
		if err := decodeChange(&c, fields, edited, before, after); err != nil {
			return fmt.Errorf("run %d: %s %s: %w", runID, k, c.SourceID, err)
		}
		seen[k] = true
		kc := get(k)
		for _, f := range c.Edited {
			if !slices.Contains(kc.Edited, f) {
				kc.Edited = append(kc.Edited, f)
			}
		}
		kc.Examples = append(kc.Examples, c)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for k := range seen {
		kc := get(k)
		slices.SortStableFunc(kc.Examples, func(a, b Change) int {
			return slices.Index(changeOrder, a.Change) - slices.Index(changeOrder, b.Change)
		})
	}
	return nil
}

// decodeChange reads a change's JSON columns: its fields, the fields
// edited by hand, and the before and after of the fields that changed.
func decodeChange(c *Change, fields, edited, before, after string) error {
	var b, a map[string]any
	for _, x := range []struct {
		s string
		v any
	}{{fields, &c.Fields}, {edited, &c.Edited}, {before, &b}, {after, &a}} {
		if err := json.Unmarshal([]byte(x.s), x.v); err != nil {
			return fmt.Errorf("record_changes: %w", err)
		}
	}
	if c.Fields == nil {
		c.Fields = []string{}
	}
	for _, f := range c.Fields {
		c.Values = append(c.Values, FieldChange{Field: f, Before: valueText(b[f]), After: valueText(a[f])})
	}
	return nil
}

// valueText writes a field's value as text: a string as it is, nothing as
// "", anything else as its JSON.
func valueText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// ChangeTotals are the run's changes at the source over its kinds.
func (r *Report) ChangeTotals() KindChanges {
	var t KindChanges
	for _, k := range r.Changes {
		t.Outdated += k.Outdated
		t.Conflict += k.Conflict
		t.DeletedSince += k.DeletedSince
		t.Updated += k.Updated
		t.Overwritten += k.Overwritten
		t.Applicable += k.Applicable
		for _, f := range k.Edited {
			if !slices.Contains(t.Edited, f) {
				t.Edited = append(t.Edited, f)
			}
		}
	}
	return t
}

// UpdateCommand is the command that applies what the run found outdated
// and can be applied (R17), with a comment that says how many of the
// outdated records it applies:
//
//	crmimport run --tenant acme --source canonical --update ./export   # applies 37 of 40 (3 are conflicts or matched)
//
// "" when there is nothing to apply.
func (r *Report) UpdateCommand() string {
	cmd, applies := r.updateCommand()
	if cmd == "" {
		return ""
	}
	return cmd + "   # " + applies
}

// updateCommand is UpdateCommand's command — the run's tenant, source,
// profile (when not the source's own) and input paths, with --update,
// every word quoted for a shell — and its comment; "" when there is
// nothing to apply (or the run's options cannot be read).
func (r *Report) updateCommand() (cmd, applies string) {
	t := r.ChangeTotals()
	if t.Applicable == 0 || r.Run.Undoes != 0 {
		return "", ""
	}
	opts, err := runopts.Decode(r.Run)
	if err != nil || opts.Input == "" {
		return "", ""
	}
	words := []string{"crmimport", "run", "--tenant", r.Run.Tenant, "--source", r.Run.Source}
	switch {
	case opts.ProfileFile != "":
		words = append(words, "--profile", opts.ProfileFile)
	case opts.Profile != "" && opts.Profile != r.Run.Source:
		words = append(words, "--profile", opts.Profile)
	}
	words = append(words, "--update", opts.Input)
	words = append(words, opts.Inputs...)
	outdated := max(r.Total.Outdated, t.Outdated+t.Conflict)
	applies = fmt.Sprintf("applies %s of %s", Count(t.Applicable), Count(outdated))
	if rest := outdated - t.Applicable; rest > 0 {
		applies += fmt.Sprintf(" (%s %s)", Count(rest), plural(rest, "is a conflict or matched", "are conflicts or matched"))
	}
	return ShellCommand(words...), applies
}

// changesNext says, in two or three lines, what the run found changed at
// the source: the outdated records and the command that applies them, the
// conflicts and what overwrites them, the records deleted since.
func (r *Report) changesNext() []string {
	t := r.ChangeTotals()
	total := r.Total
	var out []string
	if outdated := r.perKind(func(k Kind) int64 { return k.Outdated }); outdated.total > 0 {
		s := fmt.Sprintf("%s changed at the source since %s imported (%s) and %s left as %s",
			outdated.records(), outdated.verb("it was", "they were"), outdated.list, outdated.verb("was", "were"), outdated.verb("it was", "they were"))
		if cmd, applies := r.updateCommand(); cmd != "" {
			s += fmt.Sprintf(": `%s` %s", cmd, applies)
		}
		out = append(out, s)
	}
	if total.Conflict > 0 {
		fields := "their rows"
		if len(t.Edited) > 0 {
			fields = strings.Join(t.Edited, ", ")
		}
		out = append(out, fmt.Sprintf("%s %s edited by hand since %s imported (%s): left alone; "+
			"`--update=overwrite` writes over those edits", Count(total.Conflict), plural(total.Conflict, "record was", "records were"),
			plural(total.Conflict, "it was", "they were"), fields))
	}
	if ds := r.perKind(func(k Kind) int64 { return k.DeletedSince }); ds.total > 0 {
		out = append(out, fmt.Sprintf("%s %s deleted in the source since %s imported (%s): left in place — deletions are never propagated",
			ds.records(), ds.verb("was", "were"), ds.verb("it was", "they were"), ds.list))
	}
	if re := r.changesPerKind(func(k KindChanges) int64 { return k.RemovedEdited }); re.total > 0 {
		fields := "their fields"
		if len(t.Edited) > 0 {
			fields = strings.Join(t.Edited, ", ")
		}
		out = append(out, fmt.Sprintf("%s removed (%s) had been edited by hand since %s imported (%s): the edits went with %s",
			re.records(), re.list, re.verb("it was", "they were"), fields, re.verb("it", "them")))
	}
	if ad := r.perKind(func(k Kind) int64 { return k.Adopted }); ad.total > 0 {
		out = append(out, fmt.Sprintf("%s held no hashes of what was written for %s yet (%s: a slot of an older crmimport, or a dump's placeholder row): "+
			"%s took them now, from %s row or from the record as read, and later runs compare with them (SPEC §11)",
			ad.records(), ad.verb("it", "them"), ad.list, ad.verb("it", "they"), ad.verb("its", "their")))
	}
	return out
}

// changesPerKind is perKind of the run's changes at the source.
func (r *Report) changesPerKind(f func(KindChanges) int64) tally {
	var t tally
	var parts []string
	for _, k := range r.Changes {
		if n := f(k); n > 0 {
			t.total += n
			parts = append(parts, Count(n)+" "+noun(k.Kind, n))
			t.kinds = append(t.kinds, k.Kind.Plural())
		}
	}
	t.list = strings.Join(parts, ", ")
	return t
}

// changeDetails are a kind's changes at the source worth naming beside
// its outcomes, as Relinked is: only those it has.
func changeDetails(c phases.Counts) []string {
	var parts []string
	if c.Updated > 0 {
		s := Count(c.Updated) + " updated"
		if c.Overwritten > 0 {
			s += " (" + Count(c.Overwritten) + " overwritten)"
		}
		parts = append(parts, s)
	}
	if c.Outdated > 0 {
		s := Count(c.Outdated) + " outdated"
		if c.Conflict > 0 {
			s += " (" + Count(c.Conflict) + " conflict)"
		}
		parts = append(parts, s)
	}
	if c.DeletedSince > 0 {
		parts = append(parts, Count(c.DeletedSince)+" deleted since")
	}
	return parts
}

// changeWords name a change as the report tells it.
var changeWords = map[string]string{
	ledger.ChangeOutdated:      "outdated",
	ledger.ChangeConflict:      "conflict (edited by hand since import)",
	ledger.ChangeDeletedSince:  "deleted in the source since (deletions are never propagated)",
	ledger.ChangeUpdated:       "updated",
	ledger.ChangeOverwritten:   "overwritten (a hand edit written over)",
	ledger.ChangeRemovedEdited: "removed by the undo, edited by hand since import (the edits went with them)",
}

// writeChanges writes the section "Changed at the source" of the run's
// report (R17): per kind how many of each change, up to five examples
// with the fields that changed, and the command that applies them.
func writeChanges(w io.Writer, r *Report) {
	if len(r.Changes) == 0 {
		return
	}
	fmt.Fprintln(w, "\nChanged at the source")
	for _, k := range r.Changes {
		fmt.Fprintf(w, "  %s\n", k.Kind.Plural())
		for _, c := range changeOrder {
			n := *k.count(c)
			if n == 0 {
				continue
			}
			fmt.Fprintf(w, "    %8s  %s\n", Count(n), changeWords[c])
			for _, e := range k.Examples {
				if e.Change != c {
					continue
				}
				line := "              " + e.SourceID
				if len(e.Fields) > 0 {
					line += ": " + strings.Join(e.Fields, ", ")
				}
				if len(e.Edited) > 0 {
					line += "; edited by hand: " + strings.Join(e.Edited, ", ")
				}
				fmt.Fprintln(w, line)
			}
		}
	}
	if cmd := r.UpdateCommand(); cmd != "" {
		fmt.Fprintf(w, "  to apply them:\n    %s\n", cmd)
	}
	if t := r.ChangeTotals(); t.Conflict > 0 {
		fmt.Fprintf(w, "  conflicts: %s edited by hand since import; `--update=overwrite` writes over them\n", strings.Join(t.Edited, ", "))
	}
}
