package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"crmimport/fixtures/gen"
)

// BENCH.md (issue 28 goal 5): what make bench measured, written so that a
// reader can run it again and compare — the machine and its load, the
// versions of every program measured, and per export and scale each
// column's median, its range over the rounds, its ratio to sqlite3's
// .import of the same round, and its peak memory.

// benchReport is one bench's results.
type benchReport struct {
	started                     time.Time
	command                     string
	loadBefore, loadAfter       string
	crmimport, sqlite3, utils   string
	postgres                    string // version and settings, "" when not measured
	shapes                      []shapeResult
	big                         []scaleResult // -big: one round of .import, the schema floor and the first run
	grid                        *gridResult   // the review grid's case, when measured
	goVersion, kernel, cpu, mem string
}

// shapeResult is one export's table.
type shapeResult struct {
	shape  string
	scales []scaleResult
}

// scaleResult is one scale of an export, every round of it.
type scaleResult struct {
	scale   string
	records int
	size    int64
	rounds  int
	cols    []*column
	growth  string    // the first run's time per record against the first scale's
	loads   []float64 // the load average (1 minute) as each round began, and at the end
}

// goals are the ratios the issues set between two columns of a round
// (issue 25 item 8, issue 28), each taken inside a round and shown as
// their median and range.
var goals = []struct{ what, num, den, goal string }{
	{"first run over the schema floor", "run", "floor", "≤ 1.15 (issue 28)"},
	{"rerun, 10% changed, --update over the first run", "delta", "run", "≤ 0.5 (issue 25)"},
	{"undo of the run over the first run", "undo", "run", "≤ 1 (issue 28)"},
	{"PostgreSQL run over the SQLite run", "pgrun", "run", "≤ 1.3 (issue 28)"},
	{"PostgreSQL rerun over the SQLite rerun", "pgrerun", "rerun", "≤ 1.2 (issue 28)"},
	{"PostgreSQL run over psql \\copy", "pgrun", "pgcopy", ""},
}

func (r *benchReport) markdown() string {
	r.describeMachine()
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# crmimport bench\n\n")
	p("Written by crmbench (`make bench`) on %s UTC: `%s`. Run it again and compare the ratios: absolute times drift on\n",
		r.started.Format("2006-01-02 15:04"), r.command)
	p("shared machines, ratios to sqlite3's `.import` taken inside one round much less. `cmd/crmbench/main.go` says what each column does.\n\n")
	p("| | |\n| --- | --- |\n")
	p("| machine | %s, %d CPUs, %s of memory |\n", r.cpu, runtime.NumCPU(), r.mem)
	p("| system | %s/%s, %s |\n", runtime.GOOS, runtime.GOARCH, r.kernel)
	p("| load average (1, 5, 15 min) | %s at the start, %s at the end |\n", r.loadBefore, r.loadAfter)
	p("| Go | %s |\n", r.goVersion)
	p("| crmimport | %s |\n", cellText(r.crmimport))
	p("| sqlite3 | %s |\n", cellText(r.sqlite3))
	p("| sqlite-utils | %s |\n", cellText(r.utils))
	if r.postgres != "" {
		p("| PostgreSQL | %s |\n", cellText(r.postgres))
	}
	p("\nEach cell: the median of the rounds, and the range (fastest–slowest). Ratios are to sqlite3's `.import` of the same\n")
	p("round. Peak RSS is the largest of the rounds; none for the floors (the schema floor keeps every id in Go maps, a\n")
	p("measure of time only). On PostgreSQL, peak RSS is crmimport's own, the server's not counted.\n")
	for _, s := range r.shapes {
		p("\n## %s\n", shapeTitle(s.shape))
		for _, sc := range s.scales {
			sc.markdown(&b)
		}
	}
	if g := r.grid; g != nil {
		p("\n## The review grid, %s failed rows (cmd/crmbench/grid.go)\n\n", thousands(g.rows))
		p("Written in %s (`ledger.RecordFailures`, %s a transaction); each answer of the grid once, through `grid.Page` and\n",
			seconds(g.written), thousands(gridBatch))
		p("`grid.Bulk`, as the page asks them. Peak RSS of the bench's process, the writing included: %d MiB.\n\n", g.peakRSS>>20)
		p("| answer | time | what |\n| --- | ---: | --- |\n")
		for _, st := range g.steps {
			p("| %s | %.3f s | %s |\n", st.name, st.took.Seconds(), cellText(st.what))
		}
	}
	if len(r.big) > 0 {
		p("\n## The realistic export, once at a large scale (-big)\n")
		for _, sc := range r.big {
			sc.markdown(&b)
		}
	}
	return b.String()
}

func shapeTitle(shape string) string {
	if shape == gen.ShapeRealistic {
		return "The realistic export (per kind about 2% failed and 5% skipped, duplicate ids, matches, unlinked links)"
	}
	return "The clean export (every record imports)"
}

func (sc scaleResult) markdown(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	lo, hi := slices.Min(sc.loads), slices.Max(sc.loads)
	p("\n### Scale %s: %s records, %.0f MB of CSV, %d round%s (load average %.1f–%.1f)\n\n", sc.scale, thousands(sc.records),
		float64(sc.size)/1e6, sc.rounds, plural(sc.rounds), lo, hi)
	p("| column | time | range | records/s | × .import | range | peak RSS |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for i, c := range sc.cols {
		m := median(c.ms)
		ratio, rlo, rhi := medianOf(c.ratio), slices.Min(c.ratio), slices.Max(c.ratio)
		rss := fmt.Sprintf("%d MiB", m.maxRSS>>20)
		if c.floor {
			rss = "—"
		}
		r, rr := fmt.Sprintf("%.2fx", ratio), fmt.Sprintf("%.2f–%.2f", rlo, rhi)
		if i == 0 {
			r, rr = "1", ""
		}
		p("| %s | %s | %s | %s | %s | %s | %s |\n", cellText(c.name), seconds(m.wall), timeRange(c.ms),
			thousands(int(float64(sc.records)/m.wall.Seconds())), r, rr, rss)
	}
	if sc.growth != "—" && sc.growth != "" {
		p("\nThe first run's time per record, against the first scale's: %s.\n", sc.growth)
	}
	var rows []string
	for _, g := range goals {
		num, den := sc.col(g.num), sc.col(g.den)
		if num == nil || den == nil {
			continue
		}
		var xs []float64
		for i := range num.ms {
			xs = append(xs, num.ms[i].wall.Seconds()/den.ms[i].wall.Seconds())
		}
		rows = append(rows, fmt.Sprintf("| %s | %.2fx | %.2f–%.2f | %s |\n", g.what, medianOf(xs), slices.Min(xs), slices.Max(xs), g.goal))
	}
	if len(rows) > 0 {
		p("\n| between columns, per round | median | range | goal |\n| --- | ---: | ---: | --- |\n%s", strings.Join(rows, ""))
	}
}

func (sc scaleResult) col(key string) *column {
	for _, c := range sc.cols {
		if c.key == key {
			return c
		}
	}
	return nil
}

func seconds(d time.Duration) string {
	if d >= 100*time.Second {
		return fmt.Sprintf("%.0f s", d.Seconds())
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func timeRange(ms []measure) string {
	lo, hi := ms[0].wall, ms[0].wall
	for _, m := range ms {
		lo, hi = min(lo, m.wall), max(hi, m.wall)
	}
	if len(ms) == 1 {
		return "one round"
	}
	return strings.TrimSuffix(seconds(lo), " s") + "–" + seconds(hi)
}

// thousands writes n with a comma between each three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// cellText keeps a table's cell in one cell.
func cellText(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(strings.TrimSpace(s))
}

// versionOf is the first line a program prints for its version flag.
func versionOf(prog string, flag string) string {
	out, err := exec.Command(prog, flag).Output()
	if err != nil {
		return "(" + prog + " " + flag + ": " + err.Error() + ")"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line
}

// commitOf is the commit bin was built from, as Go's build information
// keeps it (go version -m), with "modified" when the tree had changes.
func commitOf(bin string) string {
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		return "(" + bin + ": no build information: " + err.Error() + ")"
	}
	var rev, modified string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "build" {
			k, v, _ := strings.Cut(f[1], "=")
			switch k {
			case "vcs.revision":
				rev = v
			case "vcs.modified":
				modified = v
			}
		}
	}
	if rev == "" {
		// Built without its build information (GOFLAGS=-buildvcs=false,
		// or out of a checkout): the tree the bench runs in, which make
		// bench builds bin from just before.
		out, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			return "(" + bin + " has no build information, and the bench runs outside a git checkout)"
		}
		rev = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
			modified = "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		return "commit " + rev + ", with changes not committed"
	}
	return "commit " + rev
}

// describeMachine reads what the report says of the machine.
func (r *benchReport) describeMachine() {
	r.goVersion = runtime.Version()
	r.cpu = cpuModel()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		r.kernel = "kernel " + strings.TrimSpace(string(b))
	}
	r.mem = "?"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			var kib int64
			if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kib); err == nil {
				r.mem = fmt.Sprintf("%.0f GiB", float64(kib)/(1<<20))
			}
		}
	}
}
