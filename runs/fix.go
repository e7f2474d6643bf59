package runs

import (
	"fmt"
	"os"
	"path/filepath"

	"crmimport/importer"
	"crmimport/ledger"
)

// A fix folder's two files that are not rows of an export (the run over
// it leaves them out).
const (
	FixManifestName = importer.FixManifestName
	FixReasonsName  = importer.FixReasonsName
)

// FixManifest is what a fix folder says of the run whose rows it holds.
type FixManifest = importer.FixManifest

// FixFolderOf is the manifest of the fix folder run r reads, nil when it
// reads none.
func FixFolderOf(r Run) (*FixManifest, string, error) {
	opts, err := importer.DecodeOptions(r)
	if err != nil {
		return nil, "", err
	}
	man, err := importer.ReadFixManifest(opts.Input)
	return man, opts.Input, err
}

// FixSpec is the run over a fix folder (dir) of run r's rows: its tenant,
// source and profile, only the rows' kinds, in the file's own encoding (a
// fix file is UTF-8, whatever the run was told to read). A custom profile
// is written as the run kept it (Options.ProfileText) into base, so that
// the fix run maps the rows as the failed run did; cleanup removes it when
// no run reads it.
func FixSpec(r Run, kinds []ledger.Kind, dir, base string) (Spec, func(), error) {
	cleanup := func() {}
	opts, err := importer.DecodeOptions(r)
	if err != nil {
		return Spec{}, cleanup, err
	}
	spec := Spec{Tenant: r.Tenant, Source: r.Source, Profile: opts.Profile, Input: dir, Only: kinds, BatchSize: DefaultBatchSize}
	if opts.ProfileText != "" {
		f, err := os.CreateTemp(base, fmt.Sprintf("run%d-profile-*-%s", r.ID, filepath.Base(opts.ProfileFile)))
		if err != nil {
			return spec, cleanup, err
		}
		cleanup = func() { _ = os.Remove(f.Name()) }
		_, err = f.WriteString(opts.ProfileText)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return spec, cleanup, fmt.Errorf("profile of run %d: %w", r.ID, err)
		}
		spec.Profile = f.Name()
	}
	return spec, cleanup, nil
}
