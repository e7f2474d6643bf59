package runs

import (
	"fmt"
	"os"
	"path/filepath"

	"crmimport/importer/fixmanifest"
	"crmimport/importer/runopts"
	"crmimport/ledger"
)

// A fix folder's two files that are not rows of an export (the run over
// it leaves them out).
const (
	FixManifestName = fixmanifest.Name
	FixReasonsName  = fixmanifest.ReasonsName
)

// FixManifest is what a fix folder says of the run whose rows it holds.
type FixManifest = fixmanifest.Manifest

// FixFolderOf is the manifest of the fix folder run r reads, nil when it
// reads none.
func FixFolderOf(r Run) (*FixManifest, string, error) {
	opts, err := runopts.Decode(r)
	if err != nil {
		return nil, "", err
	}
	man, err := fixmanifest.Read(opts.Input)
	return man, opts.Input, err
}

// FixSpec is the run over a fix folder (dir) of run r's rows: its tenant,
// source and profile, only the rows' kinds, in the file's own encoding (a
// fix file is UTF-8, whatever the run was told to read). A custom profile
// is written as the run kept it (Options.ProfileText) into base, so that
// the fix run maps the rows as the failed run did; cleanup removes it when
// no run reads it.
func FixSpec(r Run, kinds []ledger.Kind, dir, base string) (Spec, func(), error) {
	opts, err := runopts.Decode(r)
	if err != nil {
		return Spec{}, func() {}, err
	}
	spec := Spec{Tenant: r.Tenant, Source: r.Source, Profile: opts.Profile, Input: dir, Only: kinds, BatchSize: DefaultBatchSize,
		Update: opts.Update} // R17: the re-import does what the failing run did
	cleanup, err := keptProfile(r, opts, &spec, base)
	return spec, cleanup, err
}

// keptProfile points spec at the custom profile run r kept
// (Options.ProfileText), written into base, so that a new run maps the
// files as r did; cleanup removes it.
func keptProfile(r Run, opts runopts.Options, spec *Spec, base string) (func(), error) {
	cleanup := func() {}
	if opts.ProfileText == "" {
		return cleanup, nil
	}
	f, err := os.CreateTemp(base, fmt.Sprintf("run%d-profile-*-%s", r.ID, filepath.Base(opts.ProfileFile)))
	if err != nil {
		return cleanup, err
	}
	cleanup = func() { _ = os.Remove(f.Name()) }
	_, err = f.WriteString(opts.ProfileText)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return cleanup, fmt.Errorf("profile of run %d: %w", r.ID, err)
	}
	spec.Profile = f.Name()
	return cleanup, nil
}
