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

// eachRow reads one table of the dump row by row, streamed: f gets each
// row with the line it starts on, and nothing else of the file is kept. A
// file that cannot be read as the table stops it with a *DumpError; an
// error of f stops it as it is. An absent table ("" path) has no rows.
func eachRow[T any](path, table string, f func(row T, line int) error) error {
	if path == "" {
		return nil
	}
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	if strings.HasSuffix(path, ".jsonl") {
		return eachJSONL(file, path, table, f)
	}
	return eachCSV(file, path, table, f)
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// eachCSV reads CSV through gocsv's Unmarshaller over a *csv.Reader built
// here (STYLE 15: no process-wide setting). The header is lower-cased (psql
// writes column names as they are; a hand-made dump may not), and each
// row's line comes from csv.Reader.FieldPos (gocsv's own line numbers are
// wrong after a multi-line field).
func eachCSV[T any](r io.Reader, path, table string, f func(row T, line int) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	if head, err := br.Peek(3); err == nil && bytes.Equal(head, utf8BOM) {
		_, _ = br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	var zero T
	um, err := gocsv.NewUnmarshaller(cr, zero)
	if err == nil {
		err = um.RenormalizeHeaders(func(h []string) []string {
			out := make([]string, len(h))
			for i, c := range h {
				out[i] = strings.ToLower(strings.TrimSpace(c))
			}
			return out
		})
	}
	if err != nil {
		return csvError(path, err)
	}
	have := map[string]bool{}
	for _, h := range um.Headers {
		have[h] = true
	}
	var missing []string
	for _, c := range requiredColumns[table] {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return &DumpError{File: path, Line: 1, Msg: fmt.Sprintf("the header has no %s column (a dump of %s needs %s)",
			strings.Join(missing, ", "), table, strings.Join(requiredColumns[table], ", "))}
	}
	for {
		v, err := um.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return csvError(path, err)
		}
		line, _ := cr.FieldPos(0)
		if err := f(v.(T), line); err != nil {
			return err
		}
	}
}

func csvError(path string, err error) error {
	var pe *csv.ParseError
	switch {
	case errors.Is(err, io.EOF):
		return &DumpError{File: path, Msg: "is empty: a dump's table has at least its header line"}
	case errors.As(err, &pe):
		return &DumpError{File: path, Line: pe.StartLine, Msg: pe.Err.Error()}
	}
	return &DumpError{File: path, Msg: err.Error()}
}

func eachJSONL[T any](r io.Reader, path, table string, f func(row T, line int) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			if line == 1 {
				b = bytes.TrimPrefix(b, utf8BOM)
			}
			var row T
			if jerr := json.Unmarshal(b, &row); jerr != nil {
				return &DumpError{File: path, Line: line, Msg: "not a JSON object of a " + table + " row: " + jerr.Error()}
			}
			if ferr := f(row, line); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &DumpError{File: path, Line: line, Msg: err.Error()}
		}
	}
}
