// Command bench measures crmimport against the floor: sqlite3's bare
// .import of the same CSV files (no ledger, no validation, no links). For
// each scale it writes a canonical export with fixtures/gen, then runs, in
// alternation and ROUNDS times, sqlite3 .import, the schema floor (the same
// rows and a slot each written into crmimport's schema through
// modernc.org/sqlite and nothing else: schemafloor.go), a first crmimport
// run into a fresh database, a rerun of the same export (whose files the
// ledger has taken whole: counted unchanged without reading them), and a
// rerun with --reread (every file read and every record looked up); it
// prints records per second, each time as a ratio to the floor of the same
// round, and the peak memory (max RSS) of each process. Each rerun must
// count every record unchanged. Ratios are taken inside one round, since
// absolute times drift on shared machines; the table shows medians.
//
//	go run ./bench -crmimport bin/crmimport -scales "0.1 1 4"
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
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
	without := flag.String("floor.without", "", "parts the schema floor leaves out: ledger, fk, keys (comma-separated)")
	flag.Parse()
	if *floorExport != "" {
		o, err := parseWithout(*without)
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
	if err := run(*bin, *sqlite, strings.Fields(*scales), *rounds, *work); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// measure is one process: its wall time and peak memory.
type measure struct {
	wall   time.Duration
	maxRSS int64 // bytes
}

func run(bin, sqlite string, scales []string, rounds int, dir string) error {
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
	host, _ := os.Hostname()
	fmt.Printf("crmimport bench · %s · %s/%s · %d CPUs · %s\n", time.Now().UTC().Format("2006-01-02"), runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), cpuModel())
	_ = host
	self, err := os.Executable()
	if err != nil {
		return err
	}
	fmt.Printf("%-6s %9s %8s  %-26s %-26s %-26s %-26s %-26s %-26s %s\n", "scale", "records", "CSV MB", "sqlite3 .import", "schema floor",
		"crmimport run", "rerun", "rerun --reread", "undo of the run", "per record vs 0.1x")
	var base float64
	for _, sc := range scales {
		scale, err := strconv.ParseFloat(sc, 64)
		if err != nil || scale <= 0 {
			return fmt.Errorf("scale %q is not a positive number", sc)
		}
		export := filepath.Join(dir, "export-"+sc)
		exp, err := gen.Write(mkdir(export), gen.Config{Contacts: int(scale * 100000), Seed: 1})
		if err != nil {
			return err
		}
		records := 0
		for _, n := range exp.Records {
			records += n
		}
		size := dirSize(export)
		var floors, schemas, firsts, reruns, rereads, undos []measure
		var schemaRatio, firstRatio, rerunRatio, rereadRatio, undoRatio []float64
		for r := 0; r < rounds; r++ {
			floor, err := sqliteImport(sqlite, export, filepath.Join(dir, "floor.db"))
			if err != nil {
				return err
			}
			db := filepath.Join(dir, "crm.db")
			schema, err := timed(exec.Command(self, "-schema-floor", export, "-db", db))
			if err != nil {
				return err
			}
			removeDB(db)
			first, err := crm(bin, db, export, exp.Status.First, -1)
			if err != nil {
				return err
			}
			rerun, err := crm(bin, db, export, exp.Status.Rerun, records)
			if err != nil {
				return err
			}
			reread, err := crm(bin, db, export, exp.Status.Rerun, records, "--reread")
			if err != nil {
				return err
			}
			undo, err := crmUndo(bin, db, 1, records)
			if err != nil {
				return err
			}
			removeDB(db)
			floors, schemas, firsts = append(floors, floor), append(schemas, schema), append(firsts, first)
			reruns, rereads, undos = append(reruns, rerun), append(rereads, reread), append(undos, undo)
			schemaRatio = append(schemaRatio, schema.wall.Seconds()/floor.wall.Seconds())
			firstRatio = append(firstRatio, first.wall.Seconds()/floor.wall.Seconds())
			rerunRatio = append(rerunRatio, rerun.wall.Seconds()/floor.wall.Seconds())
			rereadRatio = append(rereadRatio, reread.wall.Seconds()/floor.wall.Seconds())
			undoRatio = append(undoRatio, undo.wall.Seconds()/floor.wall.Seconds())
		}
		f, sf, fi, re, rr, un := median(floors), median(schemas), median(firsts), median(reruns), median(rereads), median(undos)
		perRecord := fi.wall.Seconds() / float64(records)
		growth := "—"
		if base == 0 {
			base = perRecord
		} else {
			growth = fmt.Sprintf("%+.0f%%", (perRecord/base-1)*100)
		}
		fmt.Printf("%-6s %9d %8.0f  %-26s %-26s %-26s %-26s %-26s %-26s %s\n", sc, records, float64(size)/1e6,
			cell(f, records, 0), floorCell(sf, records, medianOf(schemaRatio)), cell(fi, records, medianOf(firstRatio)), cell(re, records, medianOf(rerunRatio)),
			cell(rr, records, medianOf(rereadRatio)), cell(un, records, medianOf(undoRatio)), growth)
	}
	fmt.Println("each cell: median wall time, records/s, ratio to sqlite3 .import of the same round (median), peak RSS")
	fmt.Println("undo of the run: `crmimport undo` of the first run (R16), after the reruns, which own no slot")
	fmt.Println("schema floor: the same rows and one ledger slot each, written into crmimport's schema through modernc.org/sqlite")
	fmt.Println("  through crmimport's row writer and claim, values validated, nothing else (bench/schemafloor.go):")
	fmt.Println("  a measured lower bound for a first run that keeps SPEC §6, R1 and R5")
	return nil
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

// crm runs crmimport on the export and checks the status it reports and,
// unless unchanged is negative, that it counted that many records unchanged.
func crm(bin, db, export, want string, unchanged int, flags ...string) (measure, error) {
	args := append([]string{"--db", db, "--json", "--quiet", "run", "--tenant", "bench", "--source", "canonical"}, flags...)
	cmd := exec.Command(bin, append(args, export)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	m, err := timed(cmd)
	var s struct {
		Status string
		Kinds  map[string]struct{ Unchanged int }
	}
	if jerr := json.Unmarshal(out.Bytes(), &s); jerr != nil || s.Status != want {
		return m, fmt.Errorf("crmimport ended %q (want %q): %v %s", s.Status, want, err, out.String())
	}
	got := 0
	for _, k := range s.Kinds {
		got += k.Unchanged
	}
	if unchanged >= 0 && got != unchanged {
		return m, fmt.Errorf("crmimport %s counted %d records unchanged, want %d", strings.Join(flags, " "), got, unchanged)
	}
	return m, nil
}

// crmUndo takes run back (R16) and checks that the undo succeeded and took
// back a slot per record of the export (every record of the bench's export
// is imported).
func crmUndo(bin, db string, run, records int) (measure, error) {
	cmd := exec.Command(bin, "--db", db, "--json", "--quiet", "undo", strconv.Itoa(run))
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
	got := 0
	for _, k := range s.Kinds {
		got += k.Removed + k.Released + k.Restored + k.Cleared
	}
	if got != records {
		return m, fmt.Errorf("crmimport undo %d took back %d slots, want %d", run, got, records)
	}
	return m, nil
}

func timed(cmd *exec.Cmd) (measure, error) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
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
