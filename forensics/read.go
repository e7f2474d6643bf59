package forensics

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gocarina/gocsv"
)

// The tables a dump holds, each as <table>.csv or <table>.jsonl.
const (
	tableRuns  = "migrations"
	tableTasks = "migration_tasks"
	tableSlots = "migration_records"
)

// runRow is a row of migrations as a dump writes it. Columns not named here
// are ignored; missing ones are NULL (SPEC §5).
type runRow struct {
	ID                    Cell `csv:"id" json:"id"`
	TenantID              Cell `csv:"tenant_id" json:"tenant_id"`
	Source                Cell `csv:"source" json:"source"`
	Status                Cell `csv:"status" json:"status"`
	CurrentPhase          Cell `csv:"current_phase" json:"current_phase"`
	CancellationRequested Cell `csv:"cancellation_requested" json:"cancellation_requested"`
	Stats                 Cell `csv:"stats" json:"stats"`
	Options               Cell `csv:"options" json:"options"`
	StartedAt             Cell `csv:"started_at" json:"started_at"`
	FinishedAt            Cell `csv:"finished_at" json:"finished_at"`
	DurationMS            Cell `csv:"duration_ms" json:"duration_ms"`
	Message               Cell `csv:"message" json:"message"`
	Attempts              Cell `csv:"attempts" json:"attempts"`
}

// taskRow is a row of migration_tasks. A production task's file is not
// read: it names a file of the production host, not one here.
type taskRow struct {
	ID          Cell `csv:"id" json:"id"`
	MigrationID Cell `csv:"migration_id" json:"migration_id"`
	Kind        Cell `csv:"kind" json:"kind"`
	Phase       Cell `csv:"phase" json:"phase"`
	Status      Cell `csv:"status" json:"status"`
	Checkpoint  Cell `csv:"checkpoint" json:"checkpoint"`
	Attempts    Cell `csv:"attempts" json:"attempts"`
	LastError   Cell `csv:"last_error" json:"last_error"`
	UpdatedAt   Cell `csv:"updated_at" json:"updated_at"`
	Imported    Cell `csv:"imported" json:"imported"`
	Matched     Cell `csv:"matched" json:"matched"`
	Unchanged   Cell `csv:"unchanged" json:"unchanged"`
	Skipped     Cell `csv:"skipped" json:"skipped"`
	Failed      Cell `csv:"failed" json:"failed"`
	Duplicate   Cell `csv:"duplicate" json:"duplicate"`
	Unlinked    Cell `csv:"unlinked" json:"unlinked"`
}

// slotRow is a row of migration_records.
type slotRow struct {
	ID          Cell `csv:"id" json:"id"`
	TenantID    Cell `csv:"tenant_id" json:"tenant_id"`
	Source      Cell `csv:"source" json:"source"`
	Kind        Cell `csv:"kind" json:"kind"`
	SourceID    Cell `csv:"source_id" json:"source_id"`
	MigrationID Cell `csv:"migration_id" json:"migration_id"`
	RecordType  Cell `csv:"record_type" json:"record_type"`
	RecordID    Cell `csv:"record_id" json:"record_id"`
	Action      Cell `csv:"action" json:"action"`
	Reason      Cell `csv:"reason" json:"reason"`
	Detail      Cell `csv:"detail" json:"detail"`
	CreatedAt   Cell `csv:"created_at" json:"created_at"`
}

// required columns per table: what a dump must carry for its rows to mean
// anything here. The others default.
var requiredColumns = map[string][]string{
	tableRuns:  {"id", "tenant_id", "source", "status", "started_at"},
	tableTasks: {"id", "migration_id", "kind", "status"},
	tableSlots: {"tenant_id", "source", "kind", "source_id", "action", "created_at"},
}

// DumpError is a problem with a dump's file, at a line when it has one.
type DumpError struct {
	File string
	Line int
	Msg  string
}

func (e *DumpError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// located is a row with the line it starts on.
type located[T any] struct {
	row  T
	line int
}

// tableFile finds a table's file in the dump folder: <table>.csv or
// <table>.jsonl; "" when it has neither.
func tableFile(dir, table string) (string, error) {
	var found []string
	for _, ext := range []string{".csv", ".jsonl"} {
		p := filepath.Join(dir, table+ext)
		st, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return "", err
		case st.IsDir():
			return "", &DumpError{File: p, Msg: "is a folder, not a table's file"}
		}
		found = append(found, p)
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", &DumpError{File: dir, Msg: fmt.Sprintf("holds both %s and %s: keep one", filepath.Base(found[0]), filepath.Base(found[1]))}
}

// readTable reads one table of the dump ("" path: the table is absent).
func readTable[T any](path, table string) ([]located[T], error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if strings.HasSuffix(path, ".jsonl") {
		return readJSONL[T](f, path, table)
	}
	return readCSV[T](f, path, table)
}

// lineReader is the *csv.Reader that gocsv reads through: it lower-cases
// the header (psql writes column names as they are; a hand-made dump may
// not) and keeps the line each record starts on, from csv.Reader.FieldPos
// (gocsv's own line numbers are wrong after a multi-line field, STYLE 15).
type lineReader struct {
	r      *csv.Reader
	header []string
	lines  []int
}

func (l *lineReader) Read() ([]string, error) {
	rec, err := l.r.Read()
	if err != nil {
		return nil, err
	}
	line, _ := l.r.FieldPos(0)
	if l.header == nil {
		for i, h := range rec {
			rec[i] = strings.ToLower(strings.TrimSpace(h))
		}
		l.header = rec
	}
	l.lines = append(l.lines, line)
	return rec, nil
}

func (l *lineReader) ReadAll() ([][]string, error) {
	var out [][]string
	for {
		rec, err := l.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func readCSV[T any](r io.Reader, path, table string) ([]located[T], error) {
	br := bufio.NewReader(r)
	if head, err := br.Peek(3); err == nil && bytes.Equal(head, utf8BOM) {
		_, _ = br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = false
	lr := &lineReader{r: cr}
	var rows []T
	err := gocsv.UnmarshalCSV(lr, &rows)
	var pe *csv.ParseError
	switch {
	case errors.Is(err, gocsv.ErrEmptyCSVFile):
		return nil, &DumpError{File: path, Msg: "is empty: a dump's table has at least its header line"}
	case errors.As(err, &pe):
		return nil, &DumpError{File: path, Line: pe.StartLine, Msg: pe.Err.Error()}
	case err != nil:
		return nil, &DumpError{File: path, Msg: err.Error()}
	}
	have := map[string]bool{}
	for _, h := range lr.header {
		have[h] = true
	}
	var missing []string
	for _, c := range requiredColumns[table] {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, &DumpError{File: path, Line: 1, Msg: fmt.Sprintf("the header has no %s column (a dump of %s needs %s)",
			strings.Join(missing, ", "), table, strings.Join(requiredColumns[table], ", "))}
	}
	out := make([]located[T], len(rows))
	for i, row := range rows {
		out[i] = located[T]{row: row, line: lr.lines[i+1]}
	}
	return out, nil
}

func readJSONL[T any](r io.Reader, path, table string) ([]located[T], error) {
	br := bufio.NewReader(r)
	var out []located[T]
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			if line == 1 {
				b = bytes.TrimPrefix(b, utf8BOM)
			}
			var row T
			if jerr := json.Unmarshal(b, &row); jerr != nil {
				return nil, &DumpError{File: path, Line: line, Msg: "not a JSON object of a " + table + " row: " + jerr.Error()}
			}
			out = append(out, located[T]{row: row, line: line})
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, &DumpError{File: path, Line: line, Msg: err.Error()}
		}
	}
}
