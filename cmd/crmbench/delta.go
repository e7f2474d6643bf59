package main

import (
	"errors"
	"io/fs"
	"path/filepath"

	"crmimport/fixtures/gen"
)

// The delta column (SPEC §11, R17): the cutover export after a trial run —
// the same export with a tenth of the records each kind's first run
// created edited at the source (gen.WriteDelta) — run with --update into
// the database the runs before it left.

// deltaFraction is the share of created records the delta export edits.
const deltaFraction = 0.10

// writeDelta writes, beside export, the delta export of cfg, once per
// scale and outside the timing, and returns its folder and what its run
// with --update must report.
func writeDelta(export string, cfg gen.Config) (string, gen.DeltaExpected, error) {
	dir := export + "-delta"
	dexp, err := gen.WriteDelta(mkdir(dir), cfg, deltaFraction)
	return dir, dexp, err
}

// deltaRun times `crmimport run --update` of the delta export on a copy of
// db, so that the columns after it in the round (the rerun after a fix,
// --only, --reread, undo) meet the database the runs before it left, and
// checks its status and every kind's counts, R17's included, against the
// generator's DeltaExpected.
func deltaRun(bin, db, dir, delta string, dexp gen.DeltaExpected) (measure, error) {
	again := filepath.Join(dir, "delta.db")
	defer removeDB(again)
	if err := copyDB(db, again); err != nil {
		return measure{}, err
	}
	return crm(bin, again, delta, "rerun of the delta export with --update", dexp.Update, dexp.Status.Update, "--update")
}

// copyDB copies a database file and its write-ahead log, when it has one
// (the -shm index is rebuilt from them).
func copyDB(from, to string) error {
	removeDB(to)
	if err := copyFile(from, to); err != nil {
		return err
	}
	if err := copyFile(from+"-wal", to+"-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
