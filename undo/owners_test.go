package undo_test

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/store/storetest"
)

// ownersExport: two users, a company owned by u1, a contact owned by u9
// (a user the export gives only when withU9), a deal of the company owned
// by u1, a note on the contact owned by u2, a note whose one link is its
// owner, and a note owned by u1 whose contact is not in the export.
func ownersExport(withU9 bool) map[string]string {
	users := "id,email,name,active\nu1,ann@example.com,Ann Lee,true\nu2,,Bob Ray,false\n"
	if withU9 {
		users += "u9,nia@example.com,Nia Roe,\n"
	}
	return map[string]string{
		"users.csv":     users,
		"companies.csv": "id,name,domain,owner_id\nco1,Acme,acme.example,u1\n",
		"contacts.csv":  "id,first_name,last_name,email,company_id,owner_id,lead_source\nc1,Cy,Tan,cy@acme.example,co1,u9,Referral\n",
		"deals.csv":     "id,name,company_id,owner_id\nd1,Fleet,co1,u1\n",
		"notes.csv":     "id,body,contact_id,owner_id\nn1,Called,c1,u2\nn2,Owner only,,u1\nn3,Waits,c404,u1\n",
	}
}

// TestOwnersAreLinksToUsers: issue 26 item 1 (SPEC §4, R6, R6a, R7), on
// both engines. Users import in phase 1 before companies; a record's
// owner_id links to its user's row; an owner that does not resolve leaves
// the record imported with the owner empty, counted unowned and never
// unlinked, the value kept — and a later run that imports the user
// completes it (relinked), which an undo of that run empties again; a
// note whose one link is its owner is skipped, saying that an owner never
// anchors it; one clean run of the fixed export ends where the two did.
func TestOwnersAreLinksToUsers(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		first := w.runAs(tenant, export(t, ownersExport(false)), "canonical")
		require.Equal(t, phases.RunSucceeded, first.Status, first.Message)
		require.Equal(t, int64(2), first.Stats[ledger.User].Imported, "%+v", first.Stats)
		require.Equal(t, int64(1), first.Stats[ledger.Contact].Unowned, "%+v", first.Stats)
		require.Zero(t, first.Stats[ledger.Company].Unowned, "users import before companies, in the phase they share (R7)")
		require.Zero(t, first.Stats[ledger.Company].Relinked)
		require.Zero(t, first.Stats[ledger.Contact].Unlinked, "an owner is unowned, never unlinked")
		require.Equal(t, int64(1), first.Stats[ledger.Note].Imported)
		require.Equal(t, int64(2), first.Stats[ledger.Note].Skipped)
		for id, want := range map[string]string{"n2": ledger.ReasonOwnerOnly, "n3": ledger.ReasonNotLinked} {
			var reason string
			require.NoError(t, db.QueryRow(`SELECT reason FROM migration_records WHERE tenant_id = ? AND kind = 'note' AND source_id = ?`, tenant, id).Scan(&reason))
			require.Equal(t, want, reason, "%s: its owner resolved, and does not anchor it", id)
		}

		u1, _ := rowOf(t, db, tenant, ledger.User, "u1")
		u2, _ := rowOf(t, db, tenant, ledger.User, "u2")
		require.Equal(t, u1, linkOf(t, db, tenant, "companies", "owner_id", "co1").Int64)
		require.Equal(t, u1, linkOf(t, db, tenant, "deals", "owner_id", "d1").Int64)
		require.Equal(t, u2, linkOf(t, db, tenant, "notes", "owner_id", "n1").Int64)
		require.False(t, linkOf(t, db, tenant, "contacts", "owner_id", "c1").Valid)
		var extra string
		require.NoError(t, db.QueryRow(`SELECT extra FROM contacts WHERE tenant_id = ? AND email = 'cy@acme.example'`, tenant).Scan(&extra))
		require.JSONEq(t, `{"owner_id":"u9","lead_source":"Referral"}`, extra, "the owner's value is kept beside the columns no field maps")
		var active sql.NullInt64
		require.NoError(t, db.QueryRow(`SELECT active FROM users WHERE id = ?`, u2).Scan(&active))
		require.Equal(t, sql.NullInt64{Int64: 0, Valid: true}, active)
		afterFirst := dumpOf(t, db, tenant)

		fixed := export(t, ownersExport(true))
		second := w.runAs(tenant, fixed, "canonical")
		require.Equal(t, phases.RunSucceeded, second.Status, second.Message)
		require.Equal(t, int64(1), second.Stats[ledger.User].Imported, "%+v", second.Stats)
		require.Equal(t, int64(1), second.Stats[ledger.Contact].Relinked, "%+v", second.Stats)
		u9, _ := rowOf(t, db, tenant, ledger.User, "u9")
		require.Equal(t, u9, linkOf(t, db, tenant, "contacts", "owner_id", "c1").Int64)

		w.runAs("clean", fixed, "canonical")
		require.Equal(t, dumpOf(t, db, "clean"), dumpOf(t, db, tenant), "broken then fixed ends as one clean run")

		u := w.undo(second.ID, false)
		require.Equal(t, phases.RunSucceeded, u.Status, u.Message)
		require.Equal(t, int64(1), u.Stats[ledger.Contact].Unlinked, "%+v", u.Stats)
		require.False(t, linkOf(t, db, tenant, "contacts", "owner_id", "c1").Valid)
		require.Equal(t, afterFirst, dumpOf(t, db, tenant), "the undo gives back the state after run 1, the owner remembered")
	})
}

// TestUsersMatchByEmailAcrossSources (R5, SPEC §4): one person owning
// records in two exports is one user — matched by email, whatever the
// case, even where the profile matches nothing else; a user without an
// email is its own.
func TestUsersMatchByEmailAcrossSources(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		w.runAs(tenant, export(t, ownersExport(false)), "canonical")
		other := w.runAs(tenant, export(t, map[string]string{
			"users.csv":     "id,email,name\nx1,ANN@Example.com,Ann\nx2,,Bob Ray\n",
			"companies.csv": "id,name,domain,owner_id\nk1,Other,other.example,x1\n",
		}), "crm2")
		require.Equal(t, phases.RunSucceeded, other.Status, other.Message)
		require.Equal(t, int64(1), other.Stats[ledger.User].Matched, "%+v", other.Stats)
		u1, _ := rowOf(t, db, tenant, ledger.User, "u1")
		x1, _ := rowOf(t, db, tenant, ledger.User, "x1")
		require.Equal(t, u1, x1, "Ann is one user")
		require.Equal(t, u1, linkOf(t, db, tenant, "companies", "owner_id", "k1").Int64)
		var users int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM users WHERE tenant_id = ?`, tenant).Scan(&users))
		require.Equal(t, 3, users, "Ann once, and each Bob without an email his own")
	})
}

// TestAFailedUsersTaskDoesNotStopTheRun (R7): owners are optional links;
// a users file that cannot be read fails its task, the run goes on and
// ends partial, every owned record imported unowned.
func TestAFailedUsersTaskDoesNotStopTheRun(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		files := ownersExport(true)
		files["users.csv"] = "email,name\nann@example.com,Ann\n" // no id column
		run := w.runAs(tenant, export(t, files), "canonical")
		require.Equal(t, phases.RunPartial, run.Status, run.Message)
		require.Equal(t, int64(1), run.Stats[ledger.Company].Imported, "%+v", run.Stats)
		require.Equal(t, int64(1), run.Stats[ledger.Company].Unowned)
		require.Equal(t, int64(1), run.Stats[ledger.Deal].Imported)
		require.Equal(t, int64(1), run.Stats[ledger.Note].Imported)
	})
}

// TestOwnerNamedByEmail (SPEC §4, R5, R6): an owner written as an email
// address resolves to the user with that email, from any source, when no
// user of the source has it as its id; one whose email no user has is
// unowned, kept, and completed by a later run whose users file gives it as
// an id (R6a).
func TestOwnerNamedByEmail(t *testing.T) {
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		w := newWorld(t, db)
		w.runAs(tenant, export(t, ownersExport(false)), "canonical")
		run := w.runAs(tenant, export(t, map[string]string{
			"companies.csv": "id,name,domain,owner_id\nk1,Other,other.example,ANN@example.com\nk2,Third,third.example,zoe@example.com\n",
		}), "crm2")
		require.Equal(t, phases.RunSucceeded, run.Status, run.Message)
		require.Equal(t, int64(1), run.Stats[ledger.Company].Unowned, "%+v", run.Stats)
		u1, _ := rowOf(t, db, tenant, ledger.User, "u1")
		require.Equal(t, u1, linkOf(t, db, tenant, "companies", "owner_id", "k1").Int64, "Ann, by her email, though her user came from another source")
		require.False(t, linkOf(t, db, tenant, "companies", "owner_id", "k2").Valid)

		later := w.runAs(tenant, export(t, map[string]string{
			"users.csv":     "id,email,name\nzoe@example.com,zoe@example.com,Zoe Poe\n",
			"companies.csv": "id,name,domain,owner_id\nk1,Other,other.example,ANN@example.com\nk2,Third,third.example,zoe@example.com\n",
		}), "crm2")
		require.Equal(t, int64(1), later.Stats[ledger.Company].Relinked, "%+v", later.Stats)
		zoe, _ := rowOf(t, db, tenant, ledger.User, "zoe@example.com")
		require.Equal(t, zoe, linkOf(t, db, tenant, "companies", "owner_id", "k2").Int64)
	})
}
