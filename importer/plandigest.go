package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"crmimport/importer/input"
	"crmimport/importer/runopts"
	"crmimport/phases"
)

// A dry run and the run that confirms it are the same plan (SPEC §11: "a
// preview and its commit are the same plan"; R10): a run's plan has a
// digest over everything it commits before its first record — its tenant
// and source, its options (the export's paths, the profile and a custom
// one's text, --only, the batch size, strictness, the encoding, --reread,
// the files read beside the tasks' own with their fingerprints) and each
// task (kind, phase, file, format, encoding, fingerprint, the key of what
// it reads). A dry run shows it (the summary's `plan` and `plan_files`);
// a run given it (RunSpec.Plan: `run --plan`, the New import page's
// Import after its Dry run) is planned only if its own plan has it, else
// refused (*PlanChangedError, exit 8) naming the file that changed.

// planDigestVersion names how the digest is made.
const planDigestVersion = "crmimport run plan 1"

// planDigest is the digest of the plan of a run of tenant and source with
// options o (but its Plan) and tasks.
func planDigest(tenant, source string, o runopts.Options, tasks []phases.TaskSpec) (string, error) {
	o.Plan = ""
	opts, err := json.Marshal(o)
	if err != nil {
		return "", fmt.Errorf("plan: options: %w", err)
	}
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field(planDigestVersion)
	field(tenant)
	field(source)
	field(string(opts))
	for _, t := range tasks {
		field(string(t.Kind))
		field(fmt.Sprint(t.Phase))
		field(t.File)
		field(t.Format)
		field(t.Encoding)
		field(t.Fingerprint)
		field(t.InputKey)
		field(fmt.Sprint(t.Size))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ValidPlan reports whether s reads as a plan's digest (64 hex digits).
func ValidPlan(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// PlanChangedError refuses a run whose plan is not the one a dry run
// showed (RunSpec.Plan): nothing is written. It names the files that
// changed when the dry run's files are known (the page sends them back),
// else the files the plan reads now.
type PlanChangedError struct {
	Want string             // the digest the dry run showed
	Was  []runopts.PlanFile // the dry run's files, when known
	Now  []runopts.PlanFile
}

func (e *PlanChangedError) Error() string {
	var what string
	if e.Was != nil {
		what = "since the dry run: " + fileChanges(e.Was, e.Now)
	} else {
		what = fmt.Sprintf("since the dry run that showed plan %s: it now reads %s", shortDigest(e.Want), fileList(e.Now))
	}
	return fmt.Sprintf("the run was not started: its plan changed %s; nothing was written — "+
		"dry-run it again and import the plan it shows", what)
}

func shortDigest(d string) string {
	if len(d) > 12 {
		return d[:12] + "…"
	}
	return d
}

// maxNamed is how many files a message names before it counts the rest.
const maxNamed = 8

// fileChanges says how the files of two plans differ: a file that changed
// (its fingerprint now and then), is new, or is gone; or, with the same
// files, that the options or the profile are not the dry run's.
func fileChanges(was, now []runopts.PlanFile) string {
	key := func(f runopts.PlanFile) string { return f.Kind + "\x00" + f.Role + "\x00" + f.File }
	before := map[string]runopts.PlanFile{}
	for _, f := range was {
		before[key(f)] = f
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range now {
		k := key(f)
		seen[k] = true
		old, ok := before[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s is new (%s)", fileWord(f), f.Fingerprint))
		case old.Fingerprint != f.Fingerprint:
			out = append(out, fmt.Sprintf("%s changed (fingerprint %s, the dry run read %s)", fileWord(f), f.Fingerprint, old.Fingerprint))
		}
	}
	for _, f := range was {
		if !seen[key(f)] {
			out = append(out, fmt.Sprintf("%s is no longer read", fileWord(f)))
		}
	}
	if len(out) == 0 {
		return "it reads the same files, but its options or its profile are not the dry run's"
	}
	return joinNamed(out)
}

// fileList names the files of a plan with their fingerprints.
func fileList(files []runopts.PlanFile) string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = fmt.Sprintf("%s (%s)", fileWord(f), f.Fingerprint)
	}
	return joinNamed(out)
}

func joinNamed(parts []string) string {
	if len(parts) > maxNamed {
		return strings.Join(parts[:maxNamed], ", ") + fmt.Sprintf(" and %d more", len(parts)-maxNamed)
	}
	return strings.Join(parts, ", ")
}

// fileWord names a plan's file as messages do: "contacts.csv (contacts)",
// or a side file with its role.
func fileWord(f runopts.PlanFile) string {
	name := input.Name(f.File)
	switch {
	case f.Kind != "":
		return fmt.Sprintf("%s (%s)", name, f.Kind)
	case f.Role != "":
		return fmt.Sprintf("%s (%s)", name, f.Role)
	}
	return name
}
