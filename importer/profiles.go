package importer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"crmimport/importer/profile"
	"crmimport/importer/runopts"
)

// What a user names with --source and --profile, resolved to a profile
// (package profile): a name that names none, or a profile file that is
// missing or wrong, is a request that cannot be right as written
// (*UsageError, exit 2).

// ProfileByName returns the built-in profile of a name ("" for the
// canonical one); an unknown name is a *UsageError listing the others.
func ProfileByName(name string) (*profile.Profile, error) {
	if name == "" {
		name = "canonical"
	}
	if slices.Contains(profile.BuiltinNames(), name) {
		return profile.Builtin(name)
	}
	return nil, &UsageError{Msg: fmt.Sprintf("unknown profile %q (built-in: %s; or a profile file: --profile FILE.yaml)",
		name, strings.Join(profile.BuiltinNames(), ", "))}
}

// looksLikeFile tells a --profile value that names a file from one that
// names a built-in profile.
func looksLikeFile(s string) bool {
	switch strings.ToLower(filepath.Ext(s)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return strings.ContainsRune(s, os.PathSeparator) || strings.ContainsRune(s, '/')
}

// ResolveProfile returns the profile a --profile value names: a built-in
// profile by name, or a profile file (a path, or a name ending in .yaml,
// .yml or .json). A file that is missing or wrong is a *UsageError naming
// what is wrong.
func ResolveProfile(nameOrFile string) (*profile.Profile, error) {
	if !looksLikeFile(nameOrFile) {
		return ProfileByName(nameOrFile)
	}
	b, err := os.ReadFile(nameOrFile)
	if err != nil {
		reason := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			reason = "no such file"
		}
		return nil, &UsageError{Msg: fmt.Sprintf("profile file %s: %s", nameOrFile, reason)}
	}
	p, err := profile.Load(filepath.Base(nameOrFile), b)
	if err != nil {
		return nil, &UsageError{Msg: fmt.Sprintf("profile file %s: %v", nameOrFile, err)}
	}
	return p, nil
}

// RunProfile is the profile a run maps its files with (runopts.Profile):
// a built-in name that names none is a *UsageError listing the others.
func RunProfile(opts runopts.Options) (*profile.Profile, error) {
	if opts.ProfileText != "" {
		return runopts.Profile(opts)
	}
	p, err := ProfileByName(opts.Profile)
	return runopts.WithUsers(p, err, opts)
}
