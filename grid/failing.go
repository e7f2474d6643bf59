package grid

import (
	"regexp"
	"strconv"
	"strings"

	"crmimport/report"
)

// A reason names the field it judged first ("amount \"12,000.00\" is not a
// number", "company has no name", "missing id", "duplicate source_id, first
// at …") and quotes the value it refused, Go-quoted (canon's validation).
var (
	quotedValue = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	hasNo       = regexp.MustCompile(`\bhas no ([a-z_]+)`)
)

// FailingColumn is the column of a row as read (cells) that a failure's
// reason points at: the one whose value the reason quotes — the one named
// like the reason's field among several — else the one named like that
// field (any case, spaces and underscores aside); "" when the reason names
// no cell of the row (a row with neither a name nor an email, a broken
// quote).
func FailingColumn(reason string, cells []report.RawCell) string {
	field := fieldOf(reason)
	if m := quotedValue.FindString(reason); m != "" {
		if v, err := strconv.Unquote(m); err == nil {
			var same []string
			for _, c := range cells {
				if c.Value == v {
					same = append(same, c.Name)
				}
			}
			for _, name := range same {
				if fold(name) == fold(field) {
					return name
				}
			}
			if len(same) > 0 {
				return same[0]
			}
		}
	}
	if field == "" {
		return ""
	}
	for _, c := range cells {
		if fold(c.Name) == fold(field) {
			return c.Name
		}
	}
	return ""
}

// fieldOf is the field a reason judged, "" when it names none.
func fieldOf(reason string) string {
	switch {
	case reason == "missing id", strings.HasPrefix(reason, "duplicate source_id"), strings.HasPrefix(reason, "id "):
		return "id"
	}
	if m := hasNo.FindStringSubmatch(reason); m != nil {
		return m[1]
	}
	if first, rest, ok := strings.Cut(reason, " "); ok && strings.HasPrefix(rest, `"`) {
		return first
	}
	return ""
}

// fold is a column's name as a field's is compared with it.
func fold(s string) string {
	return strings.NewReplacer(" ", "", "_", "", "-", "").Replace(strings.ToLower(s))
}
