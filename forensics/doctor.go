package forensics

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"crmimport/canon"
	"crmimport/importer"
	"crmimport/ledger"
	"crmimport/phases"
	"crmimport/report"
	"crmimport/store"
)

// The findings doctor names.
const (
	UniformSkip     = "uniform-skip"
	StaleSkips      = "stale-skips"
	ReadyToTakeOver = "ready-to-take-over"
	StrandedWork    = "stranded-work"
	MisphasedTasks  = "misphased-tasks"
	FalseSuccess    = "false-success"
	Unfinalized     = "unfinalized"
	OrphanSlots     = "orphan-slots"
	DryRunCopies    = "dry-run-copies"
)

// The incidents of the write-up that findings add up to.
const (
	PoisonedLedger = "poisoned-ledger"
	StrandedRetry  = "stranded-retry"
)

// UniformSkipMin is how many records of a kind a run must have processed
// before doctor calls their one skip reason a uniform skip: below it, one
// reason for every record may just be a small export.
const UniformSkipMin = 20

// maxExamples is how many example ids a finding gives.
const maxExamples = 5

// Finding is one pattern doctor found in one tenant's ledger.
type Finding struct {
	Name     string   `json:"name"`
	Tenant   string   `json:"tenant"`
	Rule     string   `json:"rule"`  // the rule of SPEC it breaks
	Count    int64    `json:"count"` // how many Unit
	Unit     string   `json:"unit"`  // records, tasks or runs
	Summary  string   `json:"summary"`
	Details  []string `json:"details"`  // one line per run, kind or task
	Examples []string `json:"examples"` // up to five ids
	Repair   []string `json:"repair"`   // what to run: shell command lines to paste, each "CMD   # what it does"
	// Actions are the repairs a face can do itself, each naming its line
	// of Repair: a run of kinds over an export, or a resume.
	Actions []Action `json:"actions,omitempty"`
	runs    map[int64]bool
	cmds    []string // the commands of Repair, line by line
}

// Action is a repair line said as what it does, for a face that does it
// rather than print it (the desktop's tenant page): Do is "run" (a run of
// the tenant and source, --only Only, over an export the user names: the
// line's PATH) or "resume" (of Run; From: over an export the user names,
// `resume RUN --from PATH`, a run loaded from a dump).
type Action struct {
	Repair  int      `json:"repair"` // its line of Repair
	Do      string   `json:"do"`
	Tenant  string   `json:"tenant,omitempty"`
	Source  string   `json:"source,omitempty"`
	Profile string   `json:"profile,omitempty"`
	Only    []string `json:"only,omitempty"`
	Run     int64    `json:"run,omitempty"`
	From    bool     `json:"from,omitempty"`
}

// The repairs a face can do itself (Action.Do).
const (
	DoRun    = "run"
	DoResume = "resume"
)

// Incident is a pattern of the write-up that a tenant's findings add up to.
type Incident struct {
	Name     string   `json:"name"`
	Tenant   string   `json:"tenant"`
	Summary  string   `json:"summary"`
	Findings []string `json:"findings"`
	Runs     []int64  `json:"runs"`
}

// Diagnosis is what doctor found.
type Diagnosis struct {
	Tenant    string     `json:"tenant,omitempty"`
	Clean     bool       `json:"clean"`
	Findings  []Finding  `json:"findings"`
	Incidents []Incident `json:"incidents"`
	// LedgerOnly is set on a production engine's ledger read as it is
	// (Production.Doctor): what doctor could not check there.
	LedgerOnly *AsIs `json:"ledger_only,omitempty"`
}

// Names lists the names of the findings, in the order found.
func (d *Diagnosis) Names() []string {
	var out []string
	for _, f := range d.Findings {
		out = append(out, f.Name)
	}
	return out
}

// DoctorOptions narrow doctor to one tenant ("" for all) and name the
// database file in the repairs that need it.
type DoctorOptions struct {
	Tenant string
	DBPath string
	asIs   bool // a production ledger read as it is (Production.Doctor)
}

// doctor holds what every check needs.
type doctor struct {
	ctx    context.Context
	db     *sql.DB
	engine *phases.Engine
	opts   DoctorOptions
	loaded map[int64]string  // runs loaded from a dump -> the dump
	acts   map[string]Action // a repair's command -> what it does (runCommand, resumeCommand)
	out    map[string]*Finding
	order  []string
}

// Doctor reads the ledger and the runs and names what is wrong. It only
// reads; each finding says what repairs it.
func Doctor(ctx context.Context, db *sql.DB, e *phases.Engine, opts DoctorOptions) (*Diagnosis, error) {
	if opts.DBPath == "" {
		opts.DBPath = defaultDBPath
	}
	d := &doctor{ctx: ctx, db: db, engine: e, opts: opts, out: map[string]*Finding{}, acts: map[string]Action{}}
	var err error
	if d.loaded, err = loadedRuns(ctx, db); err != nil {
		return nil, err
	}
	checks := []func() error{d.uniformSkips, d.staleSkips, d.readyToTakeOver, d.stranded, d.misphased, d.falseSuccess, d.unfinalized}
	if !opts.asIs {
		checks = append(checks, d.orphanSlots) // a production ledger has no target tables
		checks = append(checks, d.dryRunCopies)
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return nil, err
		}
	}
	diag := &Diagnosis{Tenant: opts.Tenant, Findings: []Finding{}, Incidents: []Incident{}}
	for _, k := range d.order {
		f := d.out[k]
		if f.Examples == nil {
			f.Examples = []string{}
		}
		for i, cmd := range f.cmds {
			if a, ok := d.acts[cmd]; ok {
				a.Repair = i
				f.Actions = append(f.Actions, a)
			}
		}
		diag.Findings = append(diag.Findings, *f)
	}
	// Tenant by tenant, each in the order of the checks.
	sort.SliceStable(diag.Findings, func(i, j int) bool { return diag.Findings[i].Tenant < diag.Findings[j].Tenant })
	diag.Incidents = incidents(diag.Findings)
	diag.Clean = len(diag.Findings) == 0
	return diag, nil
}

// finding returns the tenant's finding of that name, made on first use.
func (d *doctor) finding(name, tenant string) *Finding {
	key := name + "\x00" + tenant
	if f, ok := d.out[key]; ok {
		return f
	}
	f := &Finding{Name: name, Tenant: tenant, runs: map[int64]bool{}}
	f.Rule, f.Unit, f.Summary = describe(name)
	d.out[key] = f
	d.order = append(d.order, key)
	return f
}

func (f *Finding) example(s string) {
	if len(f.Examples) < maxExamples {
		f.Examples = append(f.Examples, s)
	}
}

// repair adds a repair: a command every argument of which is quoted for a
// POSIX shell, then, as a shell comment, what it does — a line that can be
// pasted whole.
func (f *Finding) repair(cmd, note string) {
	s := commented(cmd, note)
	for _, r := range f.Repair {
		if r == s {
			return
		}
	}
	f.Repair = append(f.Repair, s)
	f.cmds = append(f.cmds, cmd)
}

// describe gives a finding's rule, unit and what it means.
func describe(name string) (rule, unit, summary string) {
	switch name {
	case UniformSkip:
		return "R9", "records", fmt.Sprintf("every record of a kind that a run processed (at least %d) took one and the same skip: "+
			"a branch that every row takes is not judging rows", UniformSkipMin)
	case StaleSkips:
		return "R3", "records", "skipped slots still carry an older run's verdict, although a later run of the dump's engine " +
			"processed their kind: that run read a placeholder as a verdict (a skip is a placeholder, not a verdict)"
	case ReadyToTakeOver:
		return "R3, R6", "records", "skipped slots whose parent, named in the slot's detail, has been imported since: " +
			"a run of their kind now takes them over"
	case StrandedWork:
		return "R7, R8", "tasks", "pending or running tasks in a phase below their run's current phase: " +
			"the barrier only moves forward, so nothing will ever pick them up"
	case MisphasedTasks:
		return "R7", "tasks", "tasks in another phase than their kind's in crmimport's plan (" + canon.PhasesInWords() + "), " +
			"as a production dump may have them: that barrier ran them in another order, " +
			"so a record could be imported before its parent and lose its link for good (a created slot is final)"
	case FalseSuccess:
		return "R9", "runs", "runs that ended with work still queued, or succeeded over failed tasks or records: " +
			"no terminal status while work is queued, and never success over a failure"
	case Unfinalized:
		return "R15", "runs", "runs without duration_ms, or running with no live owner: finalized or visibly not"
	case OrphanSlots:
		return "R1, R2", "records", "created or matched slots whose target row is missing: the slot refuses every later claim, " +
			"so no run will write the row again"
	case DryRunCopies:
		return "§5 --dry-run", "schemas", "schemas that hold a copy of this ledger's data (every tenant's) that a dry run made on the server " +
			"and never dropped (it was killed): a dry run writes nothing, and leaves nothing behind either"
	}
	return "", "", ""
}

// loadedRunsSQL: the runs `ledger load` brought in, with their dump.
const loadedRunsSQL = `SELECT id, dump FROM migrations WHERE dump IS NOT NULL`

func loadedRuns(ctx context.Context, db *sql.DB) (map[int64]string, error) {
	rows, err := db.QueryContext(ctx, loadedRunsSQL)
	if err != nil {
		return nil, fmt.Errorf("read loaded runs: %w", err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var dump string
		if err := rows.Scan(&id, &dump); err != nil {
			return nil, err
		}
		out[id] = dump
	}
	return out, rows.Err()
}

// crmimport is a crmimport command line for a POSIX shell, every argument
// quoted, with the database doctor read (--db) unless it is the default.
func (d *doctor) crmimport(args ...string) string {
	words := []string{"crmimport"}
	if d.opts.DBPath != defaultDBPath {
		words = append(words, "--db", d.opts.DBPath)
	}
	return report.ShellCommand(append(words, args...)...)
}

// defaultDBPath is the database crmimport opens without --db.
const defaultDBPath = "crmimport.db"

// placeholderPath stands for the export the user gives a command, in a
// repair's words: left unquoted, for the user to replace.
const placeholderPath = "PATH"

// runCommand is the `crmimport run` that takes over the records of kinds:
// a run of this engine takes skipped slots over (R3). A source without a
// built-in profile of its name reads the export as canonical. The command
// ends in PATH; the note says what it stands for.
func (d *doctor) runCommand(tenant, source string, kinds []ledger.Kind) (cmd, note string) {
	var names []string
	for _, k := range phases.InPhaseOrder(kinds) {
		names = append(names, k.Plural())
	}
	args := []string{"run", "--tenant", tenant, "--source", source}
	act := Action{Do: DoRun, Tenant: tenant, Source: source, Only: names}
	if _, err := importer.ProfileByName(source); err != nil {
		args = append(args, "--profile", "canonical")
		act.Profile = "canonical"
	}
	args = append(args, "--only", strings.Join(names, ","))
	cmd = d.crmimport(args...) + " " + placeholderPath
	d.acts[cmd] = act
	return cmd, "PATH: an export holding these records"
}

// resumeCommand continues a run: a loaded one over a local export (R10).
// It is "" for a succeeded run, which is not resumed.
func (d *doctor) resumeCommand(runID int64, status phases.RunStatus, kinds []ledger.Kind) (cmd, note string) {
	var names []string
	for _, k := range phases.InPhaseOrder(kinds) {
		names = append(names, k.Plural())
	}
	id := strconv.FormatInt(runID, 10)
	if _, ok := d.loaded[runID]; ok {
		what := "the records it left"
		if len(names) > 0 {
			what = "its " + strings.Join(names, ", ")
		}
		cmd = d.crmimport("resume", id, "--from") + " " + placeholderPath
		d.acts[cmd] = Action{Do: DoResume, Run: runID, From: true}
		return cmd, fmt.Sprintf("PATH: a canonical export of %s; the run was loaded from a dump", what)
	}
	if status == phases.RunSucceeded {
		return "", ""
	}
	cmd = d.crmimport("resume", id)
	d.acts[cmd] = Action{Do: DoResume, Run: runID}
	return cmd, ""
}

// uniformSkipsSQL: R9, per run and kind, the slots the run owns are all
// skipped for one reason, at least UniformSkipMin of them, and the run
// neither failed nor imported a record of that kind (its task counters and
// record_failures, where it has them).
var uniformSkipsSQL = `
SELECT r.tenant_id, r.source, r.migration_id, r.kind, count(*), coalesce(min(r.reason), '')
FROM migration_records r
WHERE (?1 = '' OR r.tenant_id = ?1) AND r.migration_id IS NOT NULL
GROUP BY r.tenant_id, r.source, r.migration_id, r.kind
HAVING count(*) >= ?2 AND min(r.action) = 'skipped' AND max(r.action) = 'skipped'
   AND count(DISTINCT coalesce(r.reason, '')) = 1
   AND NOT EXISTS (SELECT 1 FROM record_failures f WHERE f.migration_id = r.migration_id AND f.kind = r.kind)
   AND NOT EXISTS (SELECT 1 FROM migration_tasks t WHERE t.migration_id = r.migration_id AND t.kind = r.kind
                   AND t.imported + t.unchanged + t.failed > 0)
ORDER BY r.tenant_id, r.migration_id, r.source, ` + kindOrder

const uniformExamplesSQL = `
SELECT source_id FROM migration_records
WHERE tenant_id = ? AND source = ? AND kind = ? AND migration_id = ? ORDER BY source_id LIMIT 5`

func (d *doctor) uniformSkips() error {
	type group struct {
		tenant, source, reason string
		run, n                 int64
		kind                   ledger.Kind
	}
	var groups []group
	err := d.each(uniformSkipsSQL, []any{d.opts.Tenant, UniformSkipMin}, func(s store.Scanner) error {
		var g group
		if err := s.Scan(&g.tenant, &g.source, &g.run, &g.kind, &g.n, &g.reason); err != nil {
			return err
		}
		groups = append(groups, g)
		return nil
	})
	if err != nil {
		return fmt.Errorf("doctor: uniform skips: %w", err)
	}
	for _, g := range groups {
		f := d.finding(UniformSkip, g.tenant)
		f.Count += g.n
		f.runs[g.run] = true
		f.Details = append(f.Details, fmt.Sprintf("run %d skipped every one of its %d %s (source %s) as %q",
			g.run, g.n, g.kind.Plural(), g.source, g.reason))
		err := d.each(uniformExamplesSQL, []any{g.tenant, g.source, string(g.kind), g.run}, func(s store.Scanner) error {
			var id string
			if err := s.Scan(&id); err != nil {
				return err
			}
			f.example(string(g.kind) + " " + id)
			return nil
		})
		if err != nil {
			return fmt.Errorf("doctor: uniform skips: %w", err)
		}
		why := d.crmimport("ledger", "why", "--tenant", g.tenant, "--kind", g.kind.Plural(), "--run", strconv.FormatInt(g.run, 10))
		switch {
		case ledger.WaitsForNothing(g.reason):
			// R6b: nothing a run of the export gives will link them;
			// no run is offered to take them over.
			f.repair(why, g.reason+": no run of this export takes them over; to import them, link them to a contact, "+
				"company or deal in the CRM and export them again")
		case g.reason != ledger.ReasonNotLinked:
			f.repair(why, "check the export and its profile; a run over the corrected export takes the slots over (R3)")
		}
	}
	// Records waiting for their parents are taken over by one run of
	// their kinds, once the parents are there.
	waiting := map[[2]string][]ledger.Kind{}
	var order [][2]string
	for _, g := range groups {
		if g.reason == ledger.ReasonNotLinked {
			k := [2]string{g.tenant, g.source}
			if waiting[k] == nil {
				order = append(order, k)
			}
			waiting[k] = append(waiting[k], g.kind)
		}
	}
	for _, k := range order {
		cmd, note := d.runCommand(k[0], k[1], waiting[k])
		d.finding(UniformSkip, k[0]).repair(cmd, "once their parents are imported; "+note)
	}
	return nil
}

// each runs a query and calls f for every row.
func (d *doctor) each(query string, args []any, f func(store.Scanner) error) error {
	return store.EachRow(d.ctx, d.db, query, args, f)
}
