package forensics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"crmimport/canon"
	"crmimport/ledger"
)

// Cell is one value of a dump, as text. "" is NULL: psql's CSV writes NULL
// as an empty field, and a JSON Lines dump writes null. The same row types
// read both forms: gocsv fills a Cell through UnmarshalCSV, encoding/json
// through UnmarshalJSON.
type Cell string

// UnmarshalCSV takes a CSV field as it stands.
func (c *Cell) UnmarshalCSV(s string) error {
	*c = Cell(s)
	return nil
}

// UnmarshalJSON takes any JSON value: a string as its text, null as "",
// true and false as psql's t and f, a number as written, and an object or
// array (stats, options, checkpoint, detail) as its JSON text.
func (c *Cell) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*c = ""
	case bytes.Equal(b, []byte("true")):
		*c = "t"
	case bytes.Equal(b, []byte("false")):
		*c = "f"
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = Cell(s)
	case len(b) > 0 && (b[0] == '{' || b[0] == '['):
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			return err
		}
		*c = Cell(buf.String())
	default:
		*c = Cell(b)
	}
	return nil
}

// cellError is a value that cannot be loaded: it names the column, the
// file and line are added by the caller.
type cellError struct {
	column string
	msg    string
}

func (e *cellError) Error() string { return e.column + ": " + e.msg }

func (c Cell) text() string { return strings.TrimSpace(string(c)) }

func (c Cell) null() bool { return c.text() == "" }

// nullText is the cell for a nullable TEXT column.
func (c Cell) nullText() any {
	if c == "" {
		return nil
	}
	return string(c)
}

// required returns the cell's text, or an error naming the column.
func (c Cell) required(column string) (string, error) {
	if c.null() {
		return "", &cellError{column, "is empty (a dump must give it)"}
	}
	return c.text(), nil
}

// int64 reads an integer; a NULL gives def.
func (c Cell) int64(column string, def int64) (int64, error) {
	if c.null() {
		return def, nil
	}
	n, err := strconv.ParseInt(c.text(), 10, 64)
	if err != nil {
		// A counter or an id written as 12.0 is still 12.
		if f, ferr := strconv.ParseFloat(c.text(), 64); ferr == nil && f == float64(int64(f)) {
			return int64(f), nil
		}
		return 0, &cellError{column, fmt.Sprintf("%q is not a whole number", c.text())}
	}
	return n, nil
}

// nullInt64 reads an integer or NULL.
func (c Cell) nullInt64(column string) (any, error) {
	if c.null() {
		return nil, nil
	}
	return c.int64(column, 0)
}

// bool reads psql's t and f (and true/false, 1/0, yes/no); NULL is false.
func (c Cell) bool(column string) (bool, error) {
	switch strings.ToLower(c.text()) {
	case "", "f", "false", "0", "no", "n":
		return false, nil
	case "t", "true", "1", "yes", "y":
		return true, nil
	}
	return false, &cellError{column, fmt.Sprintf("%q is not a boolean (t or f)", c.text())}
}

// time reads a timestamp as psql writes it, with or without a zone
// (2026-01-05 09:00:00.123456+00, 2026-01-05T09:00:00Z, 2026-01-05
// 09:00:00 read as UTC), and gives it in the database's own format.
func (c Cell) time(column string) (string, error) {
	t, err := parseDumpTime(c.text())
	if err != nil {
		return "", &cellError{column, err.Error()}
	}
	return ledger.FormatTime(t), nil
}

// nullTime reads a timestamp or NULL.
func (c Cell) nullTime(column string) (any, error) {
	if c.null() {
		return nil, nil
	}
	return c.time(column)
}

// dumpTimeLayouts are the timestamps a dump may hold, after a 'T' between
// date and time became a space. Go accepts fractional seconds after the
// seconds whatever the layout says.
var dumpTimeLayouts = []string{
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05Z07",
	"2006-01-02 15:04:05Z0700",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02 15:04:05 Z07",
	"2006-01-02 15:04:05 MST",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02",
}

func parseDumpTime(s string) (time.Time, error) {
	v := strings.TrimSpace(s)
	if len(v) > 10 && (v[10] == 'T' || v[10] == 't') {
		v = v[:10] + " " + v[11:]
	}
	if strings.HasSuffix(v, "z") {
		v = v[:len(v)-1] + "Z"
	}
	for _, layout := range dumpTimeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp (like 2026-01-05 09:00:00.123456+00 or 2026-01-05T09:00:00Z)", s)
}

// kind reads a kind, singular or plural (a production dump's kinds may be
// plural: contacts).
func (c Cell) kind(column string) (ledger.Kind, error) {
	k, err := canon.ParseKind(c.text())
	if err != nil {
		return "", &cellError{column, err.Error()}
	}
	return k, nil
}

// oneOf reads a state string that must be one of allowed.
func (c Cell) oneOf(column, what string, allowed ...string) (string, error) {
	v := strings.ToLower(c.text())
	for _, a := range allowed {
		if v == a {
			return a, nil
		}
	}
	return "", &cellError{column, fmt.Sprintf("%q is not a %s (one of: %s)", c.text(), what, strings.Join(allowed, ", "))}
}
