package store

import (
	"context"
	"errors"
	"path/filepath"
)

// Choices are store's per-engine choices, by the site each names when it
// meets an engine it does not know (Untaught), each given an engine d and
// no database (storetest.Taught); a path, where a choice takes one, is in
// dir.
func Choices(dir string) map[string]func(d Dialect) {
	ctx := context.Background()
	path := filepath.Join(dir, "crm.db")
	return map[string]func(d Dialect){
		"store.Dialect.schemaVersion":    func(d Dialect) { _, _ = d.schemaVersion(ctx, nil) },
		"store.fillOf":                   func(d Dialect) { _ = fillOf(d, "users_and_owners.sql") },
		"store.Dialect.setSchemaVersion": func(d Dialect) { _ = d.setSchemaVersion(ctx, nil, 1) },
		"store.Dialect.foreignKeysOff":   func(d Dialect) { _, _ = d.foreignKeysOff(ctx, nil) },
		"store.Dialect.foreignKeysHold":  func(d Dialect) { _ = d.foreignKeysHold(ctx, nil) },
		"store.File":                     func(d Dialect) { _, _ = d.file(ctx, nil) },
		"store.Dialect.Begin":            func(d Dialect) { _, _ = d.Begin(ctx, nil) },
		"store.Dialect.beginUpgrade":     func(d Dialect) { _, _ = d.beginUpgrade(ctx, nil) },
		"store.Dialect.upgradeLock":      func(d Dialect) { _, _ = d.upgradeLock(ctx, nil, "") },
		"store.Dialect.makeSchema":       func(d Dialect) { _ = d.makeSchema(ctx, nil, "") },
		"store.Dialect.advanceSQL":       func(d Dialect) { _ = d.advanceSQL() },
		"store.Dialect.IsConstraint":     func(d Dialect) { d.IsConstraint(errors.New("no")) },
		"store.Dialect.IsUnique":         func(d Dialect) { d.IsUnique(errors.New("no")) },
		"store.Dialect.IsPrimaryKey":     func(d Dialect) { d.IsPrimaryKey(errors.New("no")) },
		"store.Dialect.IsBusy":           func(d Dialect) { d.IsBusy(errors.New("no")) },
		"store.Analyze":                  func(d Dialect) { _ = d.analyze(ctx, nil) },
		"store.LeftCopies":               func(d Dialect) { _, _ = d.leftCopies(ctx, nil) },
		"store.Open": func(d Dialect) {
			if db, err := d.open(ctx, path, false); err == nil {
				db.Close()
			}
		},
		"store.OpenReader": func(d Dialect) {
			if db, err := d.openReader(ctx, path); err == nil {
				db.Close()
			}
		},
		"store.Beside": func(d Dialect) {
			if _, done, err := d.beside(ctx, nil); err == nil {
				done()
			}
		},
		"store.Throwaway": func(d Dialect) {
			if _, cleanup, err := d.throwaway(ctx, path); err == nil {
				_ = cleanup()
			}
		},
		"store.FileIDOf":    func(d Dialect) { _, _ = d.fileIDOf(path) },
		"store.WriteOutput": func(d Dialect) { _ = d.fileOf(path) },
		"store.LedgerOnly":  func(d Dialect) { _, _ = d.ledgerOnly(ctx, path) },
		"store.OpenLedgerOnly": func(d Dialect) {
			if db, err := d.openLedgerOnly(ctx, path); err == nil {
				db.Close()
			}
		},
		"store.Name":        func(d Dialect) { _ = d.name(path) },
		"store.CommandName": func(d Dialect) { _ = d.commandName(path) },
	}
}
