package runs

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"crmimport/canon"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
)

// Tenants (issue 27 item 3): a tenant is made by its first run (SPEC §1:
// every target row, slot and run carries it), so a typo in --tenant makes
// a new, empty one, and a rerun under it imports every record again beside
// the customer's. A tenant is therefore created on purpose: a new one that
// folds to an existing one (FoldTenant) is a warning on the command line
// and a question on the page, both asked here (Lookalike).

// Tenant is one tenant of the runs table (phases.Tenants).
type Tenant = phases.TenantRuns

// Tenants lists every tenant that has a run, by name.
func Tenants(ctx context.Context, db *sql.DB) ([]Tenant, error) { return phases.Tenants(ctx, db) }

// caseFold folds case fully (ß and ss, ﬁ and fi): strings.ToLower leaves
// them apart.
var caseFold = cases.Fold()

// FoldTenant is the form in which two tenant names that a person would
// take for one are equal: NFKC (a full-width Ａｃｍｅ is Acme, a ligature
// its letters), case folded, without white space and punctuation ("Acme
// GmbH", "acme gmbh", "ACME-GmbH" and "Ａｃｍｅ GmbH" are all "acmegmbh").
func FoldTenant(name string) string {
	s := norm.NFKC.String(caseFold.String(norm.NFKC.String(name)))
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.In(r, unicode.Cf) {
			return -1
		}
		return r
	}, s)
}

// Lookalike is the existing tenant that a new tenant name folds to
// (FoldTenant), "" when the name is a tenant already or like none. Of
// several, the first by name.
func Lookalike(ctx context.Context, db *sql.DB, name string) (string, error) {
	ts, err := phases.Tenants(ctx, db)
	if err != nil {
		return "", err
	}
	folded, like := FoldTenant(name), ""
	for _, t := range ts {
		if t.Tenant == name {
			return "", nil
		}
		if like == "" && FoldTenant(t.Tenant) == folded {
			like = t.Tenant
		}
	}
	return like, nil
}

// LookalikeError is a new tenant that folds to an existing one, refused
// by a face that asks before creating it (the desktop's New import, until
// its request says new_tenant): exit 2, a request to say again.
type LookalikeError struct{ Tenant, Existing string }

func (e *LookalikeError) Error() string {
	return fmt.Sprintf("tenant %q is new, but tenant %q exists and differs from it only in case, spaces, punctuation or "+
		"character width: import into %q, or confirm that %q is a new tenant", e.Tenant, e.Existing, e.Existing, e.Tenant)
}

// LookalikeWarning is what the command line says of a run into a new
// tenant named like an existing one: the run goes on (a script's tenant
// is what it says), and the words say how to take it back.
func LookalikeWarning(tenant, existing string, run int64, dryRun bool) string {
	s := fmt.Sprintf("tenant %q is new, but tenant %q exists and differs from it only in case, spaces, punctuation or character width: ",
		tenant, existing)
	if dryRun {
		return s + fmt.Sprintf("a run with this --tenant creates a new tenant; --tenant %s imports into the existing one",
			report.ShellCommand(existing))
	}
	return s + fmt.Sprintf("run %d creates a new tenant %q; if %q was meant, `crmimport undo %d` takes this run back and --tenant %s imports there",
		run, tenant, existing, run, report.ShellCommand(existing))
}

// The things a run did, as the tenant's page marks them (TenantRun.Did).
const (
	DidImport = "import" // a run of an export
	DidFix    = "fix"    // a run of a fix folder: a run's failed rows, corrected
	DidUpdate = "update" // a run under --update: it applies changes at the source (R17)
	DidUndo   = "undo"   // an undo of a run (R16)
	DidLoad   = "load"   // a run loaded from a production dump (`ledger load`)
)

// TenantRun is one run of a tenant and what it did.
type TenantRun struct {
	Report *report.Report `json:"-"`
	Did    string         `json:"did"`
	// Of is the run a fix fixes the rows of, or an undo takes back.
	Of int64 `json:"of,omitempty"`
	// Only are the kinds the run was limited to (--only), plural.
	Only []string `json:"only,omitempty"`
	// Input is the export the run read, "" when it has none here (a
	// run loaded from a dump, an undo); Profile the profile it read it
	// with (a built-in name or a profile file), "" for the source's own.
	Input   string `json:"input,omitempty"`
	Profile string `json:"profile,omitempty"`
}

// TenantState is a tenant as it stands now: its runs in the order they
// were made, with what each did, and what is still open across them
// (ledger.Open), each kind in the order of the table of kinds.
type TenantState struct {
	Tenant string             `json:"tenant"`
	Runs   []TenantRun        `json:"runs"`
	Open   []ledger.OpenGroup `json:"open"`
}

// TenantOf reads tenant's state; a tenant with no run is ErrNoTenant.
func TenantOf(ctx context.Context, db *sql.DB, e *phases.Engine, tenant string) (*TenantState, error) {
	reports, err := List(ctx, db, e, tenant)
	if err != nil {
		return nil, err
	}
	if len(reports) == 0 {
		return nil, fmt.Errorf("tenant %q: %w", tenant, ErrNoTenant)
	}
	st := &TenantState{Tenant: tenant, Runs: []TenantRun{}}
	for _, rep := range slices.Backward(reports) { // List is newest first
		st.Runs = append(st.Runs, didOf(rep))
	}
	if st.Open, err = ledger.Open(ctx, db, tenant); err != nil {
		return nil, err
	}
	// Each word's groups by source, then kind in the order of the table of
	// kinds (ledger.Open orders them by the kind's name), then run.
	words := []string{ledger.OpenFailed, ledger.OpenSkipped, ledger.OpenOutdated, ledger.OpenConflict, ledger.OpenUnlinked, ledger.OpenUnowned}
	kinds := canon.Kinds()
	slices.SortStableFunc(st.Open, func(a, b ledger.OpenGroup) int {
		return cmp.Or(cmp.Compare(slices.Index(words, a.What), slices.Index(words, b.What)), strings.Compare(a.Source, b.Source),
			cmp.Compare(slices.Index(kinds, a.Kind), slices.Index(kinds, b.Kind)), cmp.Compare(a.Run, b.Run))
	})
	return st, nil
}

// ErrNoTenant is a tenant no run names.
var ErrNoTenant = errors.New("no run of this tenant: a tenant is made by its first import")

// didOf says what a run did: an undo, a run loaded from a dump, a fix of
// a run's failed rows (its fix folder's manifest, when the folder is
// still where the run read it), an update, or an import.
func didOf(rep *report.Report) TenantRun {
	r := rep.Run
	tr := TenantRun{Report: rep, Did: DidImport}
	switch {
	case r.Undoes != 0:
		tr.Did, tr.Of = DidUndo, r.Undoes
		return tr
	case rep.Dump != "":
		tr.Did = DidLoad
		return tr
	}
	opts, err := OptionsOf(r)
	if err != nil {
		return tr // options it cannot read: an import, as far as this page can tell
	}
	tr.Only, tr.Input, tr.Profile = opts.Only, opts.Input, cmp.Or(opts.ProfileFile, opts.Profile)
	if man, _, err := FixFolderOf(r); err == nil && man != nil {
		tr.Did, tr.Of = DidFix, man.Run
	} else if opts.Update != "" {
		tr.Did = DidUpdate
	}
	return tr
}
