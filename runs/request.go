package runs

import (
	"strings"

	"crmimport/canon"
	"crmimport/importer"
)

// Spec is what a user asks of a new run, on either face (importer's
// RunSpec).
type Spec = importer.RunSpec

// PlanFile is a file of a dry run's plan with its fingerprint, as its
// summary lists it and a run that confirms the plan sends it back.
type PlanFile = importer.PlanFile

// DefaultBatchSize is the batch size of a run that asks for none.
const DefaultBatchSize = importer.DefaultBatchSize

// Names are how a face spells the fields of a request in what it is told
// of a wrong one: `--tenant` on the command line, `tenant` in the API.
type Names struct {
	Command   string // "run" or "inspect": an inspection needs no tenant
	Path      string
	Tenant    string
	Source    string
	Plan      string
	BatchSize string
}

// CLINames and APINames are the two faces' spellings.
var (
	CLINames = Names{Command: "run", Path: "PATH", Tenant: "--tenant", Source: "--source", Plan: "--plan", BatchSize: "--batch-size"}
	APINames = Names{Command: "run", Path: "path", Tenant: "tenant", Source: "source", Plan: "plan", BatchSize: "batch_size"}
)

// Check tidies a request (spaces around the tenant, the source and the
// path) and refuses one that cannot be right as written, as a *UsageError
// (exit 2) that names its field as n spells it. Both faces ask it, so that
// a request is refused alike on each.
func Check(spec *Spec, n Names) error {
	spec.Tenant, spec.Source, spec.Input = strings.TrimSpace(spec.Tenant), strings.TrimSpace(spec.Source), strings.TrimSpace(spec.Input)
	switch {
	case spec.Input == "":
		return Usagef("%s needs %s: the folder, zip or file to import", n.Command, n.Path)
	case spec.Plan != "" && !importer.ValidPlan(spec.Plan):
		return Usagef("%s takes the 64 hex digits of a plan's digest, as a dry run prints it (`crmimport run --dry-run`, "+
			"the import page's Dry run); got %q", n.Plan, spec.Plan)
	case n.Command == "run" && spec.Tenant == "":
		return Usagef("%s needs %s (the workspace the data belongs to)", n.Command, n.Tenant)
	case spec.Source == "":
		return Usagef("%s needs %s (the ledger's source name, e.g. canonical)", n.Command, n.Source)
	}
	if err := importer.CheckBatchSize(spec.BatchSize); err != nil {
		return Usagef("%s: %v", n.BatchSize, err)
	}
	return nil
}

// ParseOnly reads kinds, comma-separated, singular or plural (--only, the
// API's only), into spec; name is how the face spells the field.
func ParseOnly(spec *Spec, name string, only ...string) error {
	for _, o := range only {
		for _, word := range strings.Split(o, ",") {
			if strings.TrimSpace(word) == "" {
				continue
			}
			k, err := canon.ParseKind(word)
			if err != nil {
				return Usagef("%s: %v", name, err)
			}
			spec.Only = append(spec.Only, k)
		}
	}
	return nil
}
