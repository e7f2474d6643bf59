package canon_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/canon/canontest"
	"crmimport/ledger"
)

// childrenBeforeParents fails t unless order names every kind of tbl once
// and each kind before every kind it links to.
func childrenBeforeParents(t *testing.T, tbl canon.Table, order []ledger.Kind) {
	t.Helper()
	require.ElementsMatch(t, tbl.Kinds(), order, "every kind once")
	for _, d := range tbl {
		for _, l := range d.Links {
			require.Less(t, slices.Index(order, d.Kind), slices.Index(order, l.Kind),
				"%s before its parent %s in %v", d.Kind, l.Kind, order)
		}
	}
}

// parentsBeforeChildren fails t unless order names every kind of tbl once
// and each kind after every kind it links to.
func parentsBeforeChildren(t *testing.T, tbl canon.Table, order []ledger.Kind) {
	t.Helper()
	back := slices.Clone(order)
	slices.Reverse(back)
	childrenBeforeParents(t, tbl, back)
}

// schemaKinds are the kinds that the latest CHECK (kind IN (…)) of each
// engine's schema admits.
func schemaKinds(t *testing.T) map[string][]ledger.Kind {
	t.Helper()
	check := regexp.MustCompile(`CHECK \(kind IN \(([^)]*)\)\)`)
	out := map[string][]ledger.Kind{}
	for _, engine := range []string{"sqlite", "postgres"} {
		files, err := filepath.Glob(filepath.Join("..", "store", "schema", engine, "*.sql"))
		require.NoError(t, err)
		require.NotEmpty(t, files, engine)
		for _, f := range files { // in the order of their numbers
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			for _, m := range check.FindAllStringSubmatch(string(b), -1) {
				var kinds []ledger.Kind
				for _, q := range strings.Split(m[1], ",") {
					kinds = append(kinds, ledger.Kind(strings.Trim(strings.TrimSpace(q), "'")))
				}
				out[engine] = kinds
			}
		}
		require.NotEmpty(t, out[engine], "%s: no CHECK (kind IN (…))", engine)
	}
	return out
}

// TestKindTable: every kind has its row — each kind that the code names
// and that the schemas admit — and the table holds together: each
// parent in an earlier phase, plan order parents first, an undo's order
// children first.
func TestKindTable(t *testing.T) {
	t.Parallel()
	tbl := canon.KindTable()
	require.NoError(t, tbl.Check())
	named := []ledger.Kind{ledger.User, ledger.Company, ledger.Contact, ledger.Lead, ledger.Deal, ledger.Note, ledger.Activity, ledger.Email}
	require.Equal(t, named, canon.Kinds(), "plan order")
	for engine, kinds := range schemaKinds(t) {
		require.ElementsMatch(t, kinds, canon.Kinds(), "the kinds of the %s schema", engine)
	}
	for _, k := range canon.Kinds() {
		require.True(t, tbl.Has(k), "%s has its row", k)
		require.NotEmpty(t, canon.Fields(k), "%s has its fields", k)
		require.NotEmpty(t, canon.Label(k), "%s has its label column", k)
		got, err := canon.ParseKind(strings.ToUpper(k.Plural()))
		require.NoError(t, err)
		require.Equal(t, k, got)
		for _, p := range canon.ParentKinds(k) {
			require.LessOrEqual(t, canon.Phase(p), canon.Phase(k), "%s after its parent %s", k, p)
			require.Less(t, slices.Index(canon.Kinds(), p), slices.Index(canon.Kinds(), k), "%s planned after its parent %s", k, p)
			require.GreaterOrEqual(t, canon.UndoPhase(p), canon.UndoPhase(k), "%s undone before its parent %s", k, p)
			require.Less(t, slices.Index(canon.ChildrenFirst(), k), slices.Index(canon.ChildrenFirst(), p), "%s undone before its parent %s", k, p)
		}
	}
	childrenBeforeParents(t, tbl, canon.ChildrenFirst())
	parentsBeforeChildren(t, tbl, canon.Kinds())
	require.Equal(t, "1 users and companies, 2 contacts and leads, 3 deals, 4 notes, 5 activities and emails", canon.PhasesInWords())
	require.Equal(t, []ledger.Kind{ledger.Activity, ledger.Email, ledger.Note, ledger.Deal, ledger.Lead, ledger.Contact, ledger.Company, ledger.User},
		canon.ChildrenFirst(), "a company before its owner, a user, and a lead before the contact it became, in the phase they share")

	// A lead's link to the contact it became names its role.
	k, ok := canon.KindOfLinkField("converted_contact_id")
	require.True(t, ok)
	require.Equal(t, ledger.Contact, k)
	k, ok = canon.KindOfLinkField("lead_id")
	require.True(t, ok)
	require.Equal(t, ledger.Lead, k)

	_, err := canon.ParseKind("ticket")
	require.EqualError(t, err, `unknown kind "ticket" (one of: users, companies, contacts, leads, deals, notes, activities, emails)`)
	require.PanicsWithValue(t, `canon: "ticket" is not a kind of the table of kinds`, func() { canon.Phase("ticket") })
	require.PanicsWithValue(t, `canon: "ticket" is not a kind of the table of kinds`, func() { canon.UndoPhase("ticket") })
}

// TestKindTableCheck: a table whose rows do not hold together is refused,
// naming the kind.
func TestKindTableCheck(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		change func(canon.Table) canon.Table
		err    string
	}{
		"ParentInALaterPhase": {func(t canon.Table) canon.Table { t[2].Phase = 1; t[1].Phase = 2; return t },
			"kind contact (phase 1): its parent company is not in an earlier phase (2), nor before it in its own"},
		"ParentAfterInItsPhase": {func(t canon.Table) canon.Table { t[0], t[1] = t[1], t[0]; return t },
			"kind company (phase 1): its parent user is not in an earlier phase (1), nor before it in its own"},
		"ParentWithoutRow": {func(t canon.Table) canon.Table { return t[1:] }, `kind company: links to "user", which is not a kind`},
		"TwoRows":          {func(t canon.Table) canon.Table { return append(t, t[1]) }, "kind company: two rows"},
		"LinkFieldMisnamed": {func(t canon.Table) canon.Table { t[2].Links[0].Field = "account_id"; return t },
			"kind contact: link account_id to company is not its field company_id"},
		"NoLabel": {func(t canon.Table) canon.Table { t[4].Label = ""; return t }, "kind deal: no fields or no label column"},
		"RoleNotOfTheParent": {func(t canon.Table) canon.Table { t[3].Links[0].Field = "converted_contact"; return t },
			"kind lead: link converted_contact to contact is not its field contact_id"},
		"KeyNotAField":  {func(t canon.Table) canon.Table { t[1].Key = "email"; return t }, "kind company: its natural key email is not one of its fields"},
		"OrphanNeedsIt": {func(t canon.Table) canon.Table { t[1].NeedsParent = true; return t }, "kind company: needs a parent but links to none that anchors it"},
	} {
		t.Run(name, func(t *testing.T) {
			require.EqualError(t, c.change(canon.KindTable()).Check(), c.err)
		})
	}
	// KindTable is a copy: changing it changes nothing else.
	tbl := canon.KindTable()
	tbl[2].Links[0].Kind = ledger.Deal
	require.Equal(t, []ledger.Kind{ledger.Company, ledger.User}, canon.ParentKinds(ledger.Contact))
}

// TestNewKindInTheTableAlone: a kind added to the table in this test
// alone is planned in its phase, after its parents, undone before them,
// parsed, and found in the SQL that orders by kind — with no other edit.
// (The run page's order: desktop's TestUndoKindsOfANewKind.)
func TestNewKindInTheTableAlone(t *testing.T) {
	t.Parallel()
	ticket := canontest.Ticket()
	tbl := canontest.WithKind(t, ticket)

	// Planned and phased: in phase 3 beside deals, after its company and
	// contact.
	require.Equal(t, []ledger.Kind{ledger.User, ledger.Company, ledger.Contact, ledger.Lead, ledger.Deal, "ticket", ledger.Note, ledger.Activity, ledger.Email},
		tbl.Kinds())
	require.Equal(t, 3, tbl.Def("ticket").Phase)
	require.Equal(t, "1 users and companies, 2 contacts and leads, 3 deals and tickets, 4 notes, 5 activities and emails", tbl.PhasesInWords())
	parentsBeforeChildren(t, tbl, tbl.Kinds())
	k, err := tbl.Parse("Tickets")
	require.NoError(t, err)
	require.Equal(t, ledger.Kind("ticket"), k)

	// Undone: before its company and contact, in the undo's phase 3 of 5.
	require.Equal(t, []ledger.Kind{ledger.Activity, ledger.Email, ledger.Note, ledger.Deal, "ticket", ledger.Lead, ledger.Contact, ledger.Company, ledger.User},
		tbl.ChildrenFirst())
	childrenBeforeParents(t, tbl, tbl.ChildrenFirst())
	require.Equal(t, 3, tbl.UndoPhase("ticket"))
	require.Less(t, tbl.UndoPhase("ticket"), tbl.UndoPhase(ledger.Contact))

	// The SQL that orders by kind and gives a kind's phase.
	require.Equal(t, "CASE t.kind WHEN 'user' THEN 1 WHEN 'company' THEN 1 WHEN 'contact' THEN 2 WHEN 'lead' THEN 2 WHEN 'deal' THEN 3 "+
		"WHEN 'ticket' THEN 3 WHEN 'note' THEN 4 WHEN 'activity' THEN 5 WHEN 'email' THEN 5 END", tbl.PhaseCase("t.kind"))
	require.Equal(t, "CASE r.kind WHEN 'user' THEN 1 WHEN 'company' THEN 2 WHEN 'contact' THEN 3 WHEN 'lead' THEN 4 WHEN 'deal' THEN 5 "+
		"WHEN 'ticket' THEN 6 WHEN 'note' THEN 7 WHEN 'activity' THEN 8 WHEN 'email' THEN 9 END", tbl.OrderCase("r.kind"))

	// A kind that links to it makes ticket_id a link field.
	_, isLink := tbl.LinkKind("ticket_id")
	require.False(t, isLink)
	comment := canon.Def{Kind: "comment", Phase: 4, Label: "body", NeedsParent: true,
		Fields: []string{"id", "body", "ticket_id"}, Links: []canon.Link{{Field: "ticket_id", Kind: "ticket"}}}
	withComment := append(tbl.Clone(), comment)
	require.NoError(t, withComment.Check())
	k, isLink = withComment.LinkKind("ticket_id")
	require.True(t, isLink)
	require.Equal(t, ledger.Kind("ticket"), k)
	require.Equal(t, "CASE j.key WHEN 'owner_id' THEN 'user' WHEN 'company_id' THEN 'company' WHEN 'converted_contact_id' THEN 'contact' "+
		"WHEN 'contact_id' THEN 'contact' WHEN 'lead_id' THEN 'lead' WHEN 'deal_id' THEN 'deal' WHEN 'ticket_id' THEN 'ticket' END",
		withComment.LinkKindCase("j.key"))

	// The production table is as it was.
	require.False(t, canon.KindTable().Has("ticket"))
}

// TestKindFunctionsAreTheTables: canon's functions of a kind are its
// table's (KindTable), so that a row added there is seen by all of them.
func TestKindFunctionsAreTheTables(t *testing.T) {
	t.Parallel()
	tbl := canon.KindTable()
	require.Equal(t, tbl.Kinds(), canon.Kinds())
	require.Equal(t, tbl.ChildrenFirst(), canon.ChildrenFirst())
	for _, d := range tbl {
		require.Equal(t, d.Phase, canon.Phase(d.Kind))
		require.Equal(t, tbl.UndoPhase(d.Kind), canon.UndoPhase(d.Kind))
		require.Equal(t, d.Links, canon.Parents(d.Kind))
		require.Equal(t, d.NeedsParent, canon.NeedsParent(d.Kind))
		require.Equal(t, !d.Optional, canon.StopsRun(d.Kind))
		require.Equal(t, d.Label, canon.Label(d.Kind))
		require.Equal(t, d.Fields, canon.Fields(d.Kind))
		for _, l := range d.Links {
			k, ok := canon.KindOfLinkField(l.Field)
			require.True(t, ok)
			require.Equal(t, l.Kind, k)
		}
	}
}
