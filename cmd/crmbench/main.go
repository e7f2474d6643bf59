// Command crmbench measures crmimport against the floor: sqlite3's bare
// .import of the same CSV files (no ledger, no validation, no links). For
// each scale it writes two exports with fixtures/gen — the realistic shape
// (per kind about 2% failed and 5% skipped records, duplicate ids,
// natural-key matches, unlinked links) and the clean one (every record
// imports) — and for each runs, in alternation and ROUNDS times: sqlite3
// .import, the schema floor (the rows and slots a first run writes, written
// into crmimport's schema through modernc.org/sqlite and nothing else:
// schemafloor.go), sqlite-utils insert of the same files (what a user
// would otherwise pick), a first crmimport run into a fresh database, a
// rerun of the same export, and then, on the realistic export, the rerun
// floor (what the rules require of that rerun, on a copy of its database:
// rerunfloor.go); on both, `run --update` of the delta export (gen.WriteDelta:
// a tenth of the records each kind's first run created, edited at the
// source; SPEC §11), on a copy of the database; on the realistic export a
// rerun after a fix (the contacts file replaced by gen.WriteFixed's, the whole
// export run) and the batch script's `run --only notes,activities`, on the
// clean one a rerun with --reread; and last `crmimport undo` of the first
// run. Every run's status and per-kind counts are checked against the
// generator's Expected: a mismatch fails the bench. It prints each time as
// a ratio to the floor of the same round, and the peak memory (max RSS) of
// each process. Ratios are taken inside one round, since absolute times
// drift on shared machines; the table shows medians.
//
//	go run ./cmd/crmbench -crmimport bin/crmimport -scales "0.1 1 4"
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"crmimport/fixtures/gen"
)

func main() {
	bin := flag.String("crmimport", "bin/crmimport", "the crmimport binary to measure")
	sqlite := flag.String("sqlite3", "sqlite3", "the sqlite3 shell")
	scales := flag.String("scales", "1", "scales to measure; 1 is 100,000 contacts (about 300,000 records)")
	rounds := flag.Int("rounds", 3, "rounds per scale")
	work := flag.String("dir", "", "where to write exports and databases (default: a temporary folder, removed after)")
	floorExport := flag.String("schema-floor", "", "load this export as the schema floor does, into -db, and exit (bench runs itself so)")
	floorDB := flag.String("db", "", "the database of -schema-floor")
	rerunExport := flag.String("rerun-floor", "", "refresh, on -db, what a rerun of this export must (cmd/crmbench/rerunfloor.go), and exit (bench runs itself so)")
	without := flag.String("floor.without", "", "parts the schema floor leaves out: ledger, fk, keys (comma-separated)")
	design := flag.String("floor.design", "default", "the schema floor's design: default, or scope, scopekind or compact (the slots), keys-after (the natural-key indexes), comma-separated (cmd/crmbench/floordesign.go)")
	columns := flag.String("columns", "", "measure only these columns: "+strings.Join(columnKeys, ", ")+"\n"+
		"(comma-separated; default all; a later column runs the earlier ones it needs: rerun, delta and undo need run)")
	shapes := flag.String("shapes", gen.ShapeRealistic+","+gen.ShapeClean, "the exports to measure: realistic, clean (comma-separated)")
	big := flag.String("big", "", "also measure this scale once (sqlite3 .import, the schema floor and the first run, realistic export): 16 is about 1.5 GB of CSV and needs 15-25 GB of disk")
	out := flag.String("out", "", "write the tables to this Markdown file too (make bench: BENCH.md)")
	gridRows := flag.Int("grid.rows", 400_000, "-columns grid: how many failed rows the review grid's case writes (cmd/crmbench/grid.go)")
	flag.Parse()
	if *floorExport != "" {
		o, err := parseWithout(*without)
		if err == nil {
			o.design, err = parseDesign(*design)
		}
		if err == nil {
			start := time.Now()
			if err = schemaFloor(*floorExport, *floorDB, o); err == nil {
				fmt.Printf("schema floor %s: %.2fs\n", *floorExport, time.Since(start).Seconds())
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: schema floor:", err)
			os.Exit(1)
		}
		return
	}
	if *rerunExport != "" {
		if err := rerunFloor(*rerunExport, *floorDB); err != nil {
			fmt.Fprintln(os.Stderr, "bench: rerun floor:", err)
			os.Exit(1)
		}
		return
	}
	only, err := parseColumns(*columns)
	var g *gridResult
	if err == nil && (only == nil || only["grid"]) {
		// On its own, before the tables (make bench runs every column):
		// the grid's case writes its failures directly, with no export
		// to import (cmd/crmbench/grid.go).
		g, err = gridCase(*work, *gridRows)
		delete(only, "grid")
		if err == nil && only != nil && len(only) == 1 {
			return // -columns grid alone
		}
	}
	if err == nil {
		err = run(*bin, *sqlite, strings.Fields(*scales), *rounds, *work, strings.Split(*shapes, ","), only, *big, *out, g)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// measure is one process: its wall time and peak memory.
type measure struct {
	wall   time.Duration
	maxRSS int64 // bytes
}

// column is one measured step of a round, in the order a round runs them.
type column struct {
	key   string
	name  string
	floor bool // a floor: no peak memory shown (see floorCell)
	ms    []measure
	ratio []float64
}

func run(bin, sqlite string, scales []string, rounds int, dir string, shapes []string, only map[string]bool, big, out string, g *gridResult) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "crmimport-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	if _, err := exec.LookPath(sqlite); err != nil {
		return fmt.Errorf("%s not found: install it (Debian: apt-get install sqlite3)", sqlite)
	}
	if _, err := exec.LookPath(sqliteUtils); err != nil {
		return fmt.Errorf("%s not found: install it (Debian: apt-get install sqlite-utils; elsewhere: pip install sqlite-utils)", sqliteUtils)
	}
	rep := benchReport{started: time.Now().UTC(), command: strings.Join(append([]string{"crmbench"}, os.Args[1:]...), " "), loadBefore: loadAverage(), crmimport: commitOf(bin),
		sqlite3: versionOf(sqlite, "--version"), utils: versionOf(sqliteUtils, "--version"), grid: g}
	fmt.Printf("crmimport bench · %s · %s/%s · %d CPUs · %s · load average %s\n", rep.started.Format("2006-01-02"), runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), cpuModel(), rep.loadBefore)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	var pg *pgServer
	if only == nil || only["pgrun"] || only["pgcopy"] {
		if pg, err = startPG(); err != nil {
			return err
		}
		defer pg.stop()
		rep.postgres = fmt.Sprintf("PostgreSQL %s: a local server on a Unix socket, %s", pg.version, pgSettings)
		fmt.Println(rep.postgres)
	}
	for _, shape := range shapes {
		if shape != gen.ShapeRealistic && shape != gen.ShapeClean {
			return fmt.Errorf("shape %q: want %s or %s", shape, gen.ShapeRealistic, gen.ShapeClean)
		}
		if shape == gen.ShapeRealistic {
			fmt.Println("\nthe realistic export: per kind about 2% failed and 5% skipped, duplicate ids, matches, unlinked links (fixtures/gen)")
		} else {
			fmt.Println("\nthe clean export: every record imports")
		}
		res, err := table(bin, sqlite, self, shape, scales, rounds, dir, only, pg)
		if err != nil {
			return err
		}
		rep.shapes = append(rep.shapes, shapeResult{shape: shape, scales: res})
	}
	if big != "" {
		// One round of sqlite3's .import, the schema floor and the first
		// run, on the realistic export (about 1.5 GB of CSV at 16): the
		// floor says how much of the growth is the schema's.
		fmt.Printf("\nthe realistic export at scale %s, one round: sqlite3 .import, the schema floor and the first run\n", big)
		res, err := table(bin, sqlite, self, gen.ShapeRealistic, []string{big}, 1, dir, map[string]bool{"import": true, "floor": true, "run": true}, nil)
		if err != nil {
			return err
		}
		rep.big = res
	}
	rep.loadAfter = loadAverage()
	if out != "" {
		if err := os.WriteFile(out, []byte(rep.markdown()), 0o644); err != nil {
			return err
		}
		fmt.Printf("\nwritten: %s\n", out)
	}
	fmt.Println("\neach cell: median wall time, records/s, ratio to sqlite3 .import of the same round (median), peak RSS")
	fmt.Println("sqlite-utils insert: `sqlite-utils insert DB TABLE FILE --csv` of each file, one after the other (no ledger, no links)")
	fmt.Println("rerun: the same export again; after a fix: contacts.csv replaced by its fix (gen.WriteFixed) and the whole export run;")
	fmt.Println("  --only notes,activities: then the batch script's run; each checks every kind's counts against fixtures/gen's Expected")
	fmt.Println("rerun, 10% changed, --update: `run --update` of the export with a tenth of each kind's created records edited at the")
	fmt.Println("  source (gen.WriteDelta; SPEC §11), on a copy of the database the runs before it left; updated and outdated counts checked too")
	fmt.Println("undo of the run: `crmimport undo 1 --cascade` of the first run (R16), after the reruns (on the realistic export")
	fmt.Println("  with the records the rerun after a fix imported linked to its rows)")
	fmt.Println("PostgreSQL run, rerun: the first run and the rerun into a new schema of a local server (--db postgres://…);")
	fmt.Println("  peak RSS is crmimport's own, the server's not counted")
	fmt.Println("schema floor: the rows and slots a first run writes (the failed and skipped records left out as a run leaves them),")
	fmt.Println("  written into crmimport's schema through modernc.org/sqlite through crmimport's row writer and claim, values validated,")
	fmt.Println("  nothing else (cmd/crmbench/schemafloor.go): a measured lower bound for a first run that keeps SPEC §6, R1 and R5")
	return nil
}

// columnKeys name the columns for -columns, in the order a round runs
// them; columnNeeds, the earlier columns each one needs in the same round.
var (
	columnKeys  = []string{"import", "floor", "utils", "run", "rerun", "rerunfloor", "delta", "fix", "only", "reread", "undo", "pgcopy", "pgrun", "pgrerun", "grid"}
	columnNeeds = map[string][]string{"rerun": {"run"}, "rerunfloor": {"run"}, "delta": {"run"}, "fix": {"run"}, "only": {"run", "fix"}, "reread": {"run"},
		"undo": {"run"}, "pgrerun": {"pgrun"}}
)

// parseColumns reads -columns: nil (every column) when empty, else the
// columns named and those they need. sqlite3's .import is always measured:
// every ratio is to it.
func parseColumns(s string) (map[string]bool, error) {
	if s == "" {
		return nil, nil
	}
	only := map[string]bool{"import": true}
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		known := false
		for _, c := range columnKeys {
			known = known || c == k
		}
		if !known {
			return nil, fmt.Errorf("-columns: unknown column %q (want %s)", k, strings.Join(columnKeys, ", "))
		}
		only[k] = true
		for _, n := range columnNeeds[k] {
			only[n] = true
		}
	}
	return only, nil
}

// tableColumns are the keys and names of the columns of one shape's table
// that only (nil: all of them) measures, in the order a round runs them.
func tableColumns(shape string, only map[string]bool) (keys, names []string) {
	type col struct{ key, name string }
	all := []col{{"import", "sqlite3 .import"}, {"floor", "schema floor"}, {"utils", "sqlite-utils insert"}, {"run", "crmimport run"}, {"rerun", "rerun"}}
	if shape == gen.ShapeRealistic {
		all = append(all, col{"rerunfloor", "rerun floor"})
	}
	all = append(all, col{"delta", "rerun, 10% changed, --update"})
	if shape == gen.ShapeRealistic {
		all = append(all, col{"fix", "rerun after a fix"}, col{"only", "--only notes,activities"})
	} else {
		all = append(all, col{"reread", "rerun --reread"})
	}
	all = append(all, col{"undo", "undo of the run"})
	all = append(all, col{"pgcopy", "psql \\copy"}, col{"pgrun", "PostgreSQL run"}, col{"pgrerun", "PostgreSQL rerun"})
	for _, c := range all {
		if only == nil || only[c.key] {
			keys, names = append(keys, c.key), append(names, c.name)
		}
	}
	return keys, names
}

// table measures every scale of one shape of export, the columns of only
// (nil: all of them).
func table(bin, sqlite, self, shape string, scales []string, rounds int, dir string, only map[string]bool, pg *pgServer) ([]scaleResult, error) {
	keys, names := tableColumns(shape, only)
	var results []scaleResult
	fmt.Printf("%-6s %9s %8s", "scale", "records", "CSV MB")
	for _, n := range names {
		fmt.Printf("  %-26s", n)
	}
	fmt.Println("  per record vs first scale")
	var base float64
	for _, sc := range scales {
		scale, err := strconv.ParseFloat(sc, 64)
		if err != nil || scale <= 0 {
			return nil, fmt.Errorf("scale %q is not a positive number", sc)
		}
		cfg := gen.Config{Contacts: int(scale * 100000), Seed: 1, Shape: shape}
		export := filepath.Join(dir, shape+"-"+sc)
		exp, err := gen.Write(mkdir(export), cfg)
		if err != nil {
			return nil, err
		}
		// The contacts file as exported and as fixed, kept beside the export
		// and copied into it in turn.
		contacts := filepath.Join(export, "contacts.csv")
		original, fixed := export+"-contacts.csv", export+"-fixed"
		if err := copyFile(contacts, original); err != nil {
			return nil, err
		}
		if shape == gen.ShapeRealistic {
			if err := gen.WriteFixed(mkdir(fixed), cfg); err != nil {
				return nil, err
			}
		}
		var delta string
		var dexp gen.DeltaExpected
		if only == nil || only["delta"] {
			if delta, dexp, err = writeDelta(export, cfg); err != nil {
				return nil, err
			}
		}
		records := 0
		for _, n := range exp.Records {
			records += n
		}
		size := dirSize(export)
		cols := make([]*column, len(names))
		var loads []float64 // the load average (1 minute) as each round began
		firstRun := -1
		for i, n := range names {
			cols[i] = &column{key: keys[i], name: n, floor: keys[i] == "import" || keys[i] == "floor" || keys[i] == "rerunfloor" || keys[i] == "pgcopy"}
			if keys[i] == "run" {
				firstRun = i
			}
		}
		for r := 0; r < rounds; r++ {
			if err := copyFile(original, contacts); err != nil {
				return nil, err
			}
			var ms []measure
			add := func(m measure, err error) error {
				ms = append(ms, m)
				return err
			}
			db := filepath.Join(dir, "crm.db")
			pgdb := ""
			if only == nil || only["pgrun"] {
				if pgdb, err = pg.schema(fmt.Sprintf("bench_%s_%d", shape, r)); err != nil {
					return nil, err
				}
			}
			loads = append(loads, loadAverage1())
			steps := map[string]func() error{
				"import": func() error { return add(sqliteImport(sqlite, export, filepath.Join(dir, "floor.db"))) },
				"floor":  func() error { return add(timed(exec.Command(self, "-schema-floor", export, "-db", db))) },
				"utils":  func() error { return add(sqliteUtilsInsert(export, filepath.Join(dir, "utils.db"))) },
				"run": func() error {
					removeDB(db)
					return add(crm(bin, db, export, "first run", exp.First, exp.Status.First))
				},
				"rerun": func() error { return add(crm(bin, db, export, "rerun", exp.Rerun, exp.Status.Rerun)) },
				"rerunfloor": func() error {
					// On a copy of the database the runs before it left, so
					// that the runs after it meet crmimport's own ledger.
					again := filepath.Join(dir, "rerun-floor.db")
					defer removeDB(again)
					if err := copyDB(db, again); err != nil {
						return err
					}
					return add(timed(exec.Command(self, "-rerun-floor", export, "-db", again)))
				},
				"delta": func() error { return add(deltaRun(bin, db, dir, delta, dexp)) },
				"fix": func() error {
					if err := copyFile(filepath.Join(fixed, "contacts.csv"), contacts); err != nil {
						return err
					}
					return add(crm(bin, db, export, "rerun after a fix", exp.Fixed, exp.Status.Fixed))
				},
				"only": func() error {
					return add(crm(bin, db, export, "run --only notes,activities", exp.Only, exp.Status.Only, "--only", "notes,activities"))
				},
				"reread": func() error {
					return add(crm(bin, db, export, "rerun --reread", exp.Rerun, exp.Status.Rerun, "--reread"))
				},
				"undo":   func() error { return add(crmUndo(bin, db, 1, exp)) },
				"pgcopy": func() error { return add(pg.copyCSV(export, fmt.Sprintf("bench_copy_%s_%d", shape, r))) },
				"pgrun": func() error {
					if err := copyFile(original, contacts); err != nil { // the fix's contacts, when the fix ran
						return err
					}
					return add(crm(bin, pgdb, export, "first run on PostgreSQL", exp.First, exp.Status.First))
				},
				"pgrerun": func() error { return add(crm(bin, pgdb, export, "rerun on PostgreSQL", exp.Rerun, exp.Status.Rerun)) },
			}
			for _, k := range keys {
				if err := steps[k](); err != nil {
					return nil, fmt.Errorf("%s export, scale %s, round %d: %w", shape, sc, r+1, err)
				}
			}
			removeDB(db)
			if pgdb != "" {
				if err := pg.drop(pgdb); err != nil {
					return nil, err
				}
			}
			for i, m := range ms {
				cols[i].ms = append(cols[i].ms, m)
				cols[i].ratio = append(cols[i].ratio, m.wall.Seconds()/ms[0].wall.Seconds())
			}
		}
		if err := copyFile(original, contacts); err != nil {
			return nil, err
		}
		growth := "—"
		if firstRun >= 0 {
			perRecord := median(cols[firstRun].ms).wall.Seconds() / float64(records)
			if base == 0 {
				base = perRecord
			} else {
				growth = fmt.Sprintf("%+.0f%%", (perRecord/base-1)*100)
			}
		}
		fmt.Printf("%-6s %9d %8.0f", sc, records, float64(size)/1e6)
		for i, c := range cols {
			m, ratio := median(c.ms), medianOf(c.ratio)
			switch {
			case i == 0:
				fmt.Printf("  %-26s", cell(m, records, 0))
			case c.floor:
				fmt.Printf("  %-26s", floorCell(m, records, ratio))
			default:
				fmt.Printf("  %-26s", cell(m, records, ratio))
			}
		}
		fmt.Printf("  %s\n", growth)
		results = append(results, scaleResult{scale: sc, records: records, size: size, rounds: rounds, cols: cols, growth: growth,
			loads: append(loads, loadAverage1())})
	}
	return results, nil
}

func cell(m measure, records int, ratio float64) string {
	s := fmt.Sprintf("%.2fs %dk/s", m.wall.Seconds(), int(float64(records)/m.wall.Seconds()/1000))
	if ratio > 0 {
		s += fmt.Sprintf(" %.2fx", ratio)
	}
	return s + fmt.Sprintf(" %dMiB", m.maxRSS>>20)
}

// floorCell is a cell without the peak memory: the schema floor keeps every
// id in Go maps and buffers whole batches, as a measure of time and no more.
func floorCell(m measure, records int, ratio float64) string {
	return fmt.Sprintf("%.2fs %dk/s %.2fx", m.wall.Seconds(), int(float64(records)/m.wall.Seconds()/1000), ratio)
}

func mkdir(d string) string {
	_ = os.MkdirAll(d, 0o755)
	return d
}

func removeDB(path string) {
	for _, s := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(path + s)
	}
}

// sqliteImport loads every CSV of the export into bare tables, as
// `sqlite3 db '.import --csv FILE TABLE'` does: the floor.
func sqliteImport(sqlite, export, db string) (measure, error) {
	removeDB(db)
	var script bytes.Buffer
	script.WriteString(".mode csv\n")
	entries, err := os.ReadDir(export)
	if err != nil {
		return measure{}, err
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".csv") {
			fmt.Fprintf(&script, ".import %s %s\n", filepath.Join(export, e.Name()), strings.TrimSuffix(e.Name(), ".csv"))
		}
	}
	cmd := exec.Command(sqlite, db)
	cmd.Stdin = &script
	m, err := timed(cmd)
	removeDB(db)
	return m, err
}

// crm runs crmimport on the export and checks the status it reports and
// every kind's counts against want (a kind want leaves out: all zero): the
// counts of gen.Outcome, and those of gen.DeltaOutcome (R17's) where want
// names them.
func crm[O comparable](bin, db, export, what string, want map[string]O, status string, flags ...string) (measure, error) {
	args := append([]string{"--db", db, "--json", "--quiet", "run", "--tenant", "bench", "--source", "canonical"}, flags...)
	cmd := exec.Command(bin, append(args, export)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	m, err := timed(cmd)
	var s struct {
		Status string
		Kinds  map[string]O
	}
	if jerr := json.Unmarshal(out.Bytes(), &s); jerr != nil || s.Status != status {
		return m, fmt.Errorf("crmimport %s ended %q (want %q): %v %s", what, s.Status, status, err, out.String())
	}
	for _, k := range gen.Kinds() {
		if s.Kinds[k] != want[k] {
			return m, fmt.Errorf("crmimport %s counted %s %+v, want %+v (fixtures/gen's Expected)", what, k, s.Kinds[k], want[k])
		}
	}
	return m, nil
}

// crmUndo takes run back (R16), with --cascade: on the realistic export the
// rerun after a fix imported records that link to the first run's rows, and
// they go back with it. It checks that the undo succeeded and took back, per
// kind, the rows and matches of every record the first run imported, and
// of no more records than the runs imported in all (its skips the reruns
// have taken over).
func crmUndo(bin, db string, run int, exp gen.Expected) (measure, error) {
	cmd := exec.Command(bin, "--db", db, "--json", "--quiet", "undo", strconv.Itoa(run), "--cascade")
	var out bytes.Buffer
	cmd.Stdout = &out
	m, err := timed(cmd)
	var s struct {
		Status string
		Kinds  map[string]struct{ Removed, Released, Restored, Cleared int }
	}
	if jerr := json.Unmarshal(out.Bytes(), &s); jerr != nil || s.Status != "succeeded" {
		return m, fmt.Errorf("crmimport undo %d ended %q (want succeeded): %v %s", run, s.Status, err, out.String())
	}
	for _, k := range gen.Kinds() {
		got := s.Kinds[k].Removed + s.Kinds[k].Released
		least, most := exp.First[k].Imported, exp.First[k].Imported+exp.Fixed[k].Imported
		if got < least || got > most || s.Kinds[k].Released < exp.First[k].Matched {
			return m, fmt.Errorf("crmimport undo %d --cascade took back %d %s rows and matches (%d matches), want %d to %d (%d matches at least)",
				run, got, k, s.Kinds[k].Released, least, most, exp.First[k].Matched)
		}
	}
	return m, nil
}

// sqliteUtils is the peer a user would otherwise pick: sqlite-utils's
// insert of each CSV file into a bare table.
const sqliteUtils = "sqlite-utils"

func sqliteUtilsInsert(export, db string) (measure, error) {
	removeDB(db)
	defer removeDB(db)
	entries, err := os.ReadDir(export)
	if err != nil {
		return measure{}, err
	}
	var total measure
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".csv") {
			continue
		}
		cmd := exec.Command(sqliteUtils, "insert", db, strings.TrimSuffix(e.Name(), ".csv"), filepath.Join(export, e.Name()), "--csv")
		m, err := timed(cmd)
		total.wall += m.wall
		total.maxRSS = max(total.maxRSS, m.maxRSS)
		if err == nil && cmd.ProcessState.ExitCode() != 0 {
			err = fmt.Errorf("%s insert %s exited %d", sqliteUtils, e.Name(), cmd.ProcessState.ExitCode())
		}
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// copyFile copies a file through a small buffer: a bench that held a
// database in memory would report that memory as every later child's peak
// (Linux gives a child the peak RSS of its parent at fork).
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// loadAverage1 is the load average of the last minute (0 when unknown).
func loadAverage1() float64 {
	f, _ := strconv.ParseFloat(strings.Fields(loadAverage() + " 0")[0], 64)
	return f
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func timed(cmd *exec.Cmd) (measure, error) {
	var stderr bytes.Buffer
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	start := time.Now()
	err := cmd.Run()
	m := measure{wall: time.Since(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.maxRSS = ru.Maxrss * 1024 // KiB on Linux
	}
	if err != nil {
		var ee *exec.ExitError
		if !isExit(err, &ee) {
			return m, fmt.Errorf("%s: %v: %s", cmd.Path, err, stderr.String())
		}
	}
	return m, nil
}

func isExit(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}

func median(ms []measure) measure {
	s := append([]measure(nil), ms...)
	sort.Slice(s, func(i, j int) bool { return s[i].wall < s[j].wall })
	m := s[len(s)/2]
	for _, x := range ms {
		m.maxRSS = max(m.maxRSS, x.maxRSS)
	}
	return m
}

func medianOf(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func dirSize(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
	}
	return n
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "model name") {
			if _, v, ok := strings.Cut(line, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return ""
}
