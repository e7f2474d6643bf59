package importer

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/runopts"
	"crmimport/phases"
	"crmimport/store"
	"crmimport/store/storetest"
)

// TestRunConfirmsItsDryRun (SPEC §11: a preview and its commit are the same
// plan; R10): a dry run's plan has a digest over its options and every
// task with its file's fingerprint; a run given that digest is planned
// only if its own plan has it — a file changed since the dry run refuses
// it, naming the file (with the dry run's files) or the files it reads now,
// and leaves no run; the same files under other options too; the plan
// unchanged is planned, and keeps its digest.
func TestRunConfirmsItsDryRun(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, db *sql.DB) {
		ctx := context.Background()
		dir := t.TempDir()
		for _, name := range []string{"companies.csv", "contacts.csv"} {
			b, err := os.ReadFile(filepath.Join("..", "fixtures", "demo", name))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
		}
		spec := RunSpec{Tenant: "acme", Source: "canonical", Input: dir}

		// The dry run plans on a throwaway database of its own.
		dry := New(phases.New(storetest.OpenDialect(t, store.DialectOf(db)), nil))
		run, err := dry.Plan(ctx, spec)
		require.NoError(t, err)
		tasks, err := phases.LoadTasks(ctx, dry.Engine.DB, run.ID)
		require.NoError(t, err)
		digest, files := runopts.PlanOf(run, tasks)
		require.True(t, ValidPlan(digest), digest)
		require.Len(t, files, 2)

		imp := New(phases.New(db, nil))
		runs := func() int {
			rs, err := phases.ListRuns(ctx, db, "")
			require.NoError(t, err)
			return len(rs)
		}
		contacts := filepath.Join(dir, "contacts.csv")
		was, err := os.ReadFile(contacts)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(contacts, append(append([]byte{}, was...), "con-900,Zoe,Ng,zoe.ng@example.com,,,,2024-05-05,,\r\n"...), 0o600))
		confirm := spec
		confirm.Plan, confirm.Shown = digest, files
		_, err = imp.Plan(ctx, confirm)
		var changed *PlanChangedError
		require.ErrorAs(t, err, &changed)
		require.Regexp(t, `^the run was not started: its plan changed since the dry run: contacts\.csv \(contact\) changed `+
			`\(fingerprint crc32c:[0-9a-f]{8}:\d+, the dry run read crc32c:[0-9a-f]{8}:\d+\); nothing was written — dry-run it again`, err.Error())
		confirm.Shown = nil
		_, err = imp.Plan(ctx, confirm)
		require.ErrorAs(t, err, &changed)
		require.Regexp(t, `its plan changed since the dry run that showed plan [0-9a-f]{12}…: it now reads companies\.csv \(company\) \(crc32c:[0-9a-f]{8}:\d+\), `+
			`contacts\.csv \(contact\) \(crc32c:[0-9a-f]{8}:\d+\); nothing was written`, err.Error())
		require.Zero(t, runs(), "a refused plan leaves no run")

		require.NoError(t, os.WriteFile(contacts, was, 0o600))
		strict := spec
		strict.Strict, strict.Plan, strict.Shown = true, digest, files
		_, err = imp.Plan(ctx, strict)
		require.ErrorAs(t, err, &changed)
		require.Contains(t, err.Error(), "it reads the same files, but its options or its profile are not the dry run's")
		require.Zero(t, runs())

		confirm.Shown = files
		run, err = imp.Plan(ctx, confirm)
		require.NoError(t, err, "the file as the dry run read it: the same plan")
		o, err := runopts.Decode(run)
		require.NoError(t, err)
		require.Equal(t, digest, o.Plan, "the run keeps the digest of its plan")
	})
}
