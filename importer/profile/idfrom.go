package profile

// Ids made of columns (SPEC §4): an export without an id column (a
// spreadsheet, an Odoo export by labels) names the columns whose values
// make each record's id, `id: {from: [Name, Email]}`.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"

	"crmimport/canon"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// LookalikesNote begins the run log's warning that pairs the records of a
// kind whose id is made of columns that are no longer in the export with
// the new ones that look like them (the importer writes it, a run's
// summary reads it back).
const LookalikesNote = "ids made of columns: "

// idFromSpec reads an id made of columns, {from: [COLUMN, …]}: ok=false
// when n says nothing of from (an id read from a column of its own). The
// columns are named once each, and nothing else is said beside them: a
// column of its own, a map or a default would make the id from something
// else than those values.
func (l *profileLoader) idFromSpec(n *yaml.Node, at string) (*fieldSpec, bool) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil, false
	}
	var from *entry
	var others []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Value == "from" {
			from = &entry{key: k.Value, node: k, val: n.Content[i+1]}
		} else {
			others = append(others, k.Value)
		}
	}
	if from == nil {
		return nil, false
	}
	fat := join(at, "from")
	if len(others) > 0 {
		l.fail(n, at, "from makes the id of the listed columns' values alone: %s cannot go with it "+
			"(either from: [COLUMN, …] or the id's own column)", strings.Join(others, ", "))
		return nil, true
	}
	v := deref(from.val)
	if v.Kind != yaml.SequenceNode {
		l.fail(v, fat, "expected a list of the columns whose values make the id, found %s", describeNode(v))
		return nil, true
	}
	if len(v.Content) == 0 {
		l.fail(v, fat, "names no column: list the columns whose values make the id, e.g. [Name, Email]")
		return nil, true
	}
	cols, ok := l.columns(v, fat)
	if !ok {
		return nil, true
	}
	seen := map[string]string{}
	for i, c := range cols {
		key := normaliseHeader(c)
		if first, dup := seen[key]; dup {
			l.fail(v.Content[i], fmt.Sprintf("%s[%d]", fat, i), "%q is listed twice (first as %q): each column counts once in the id", c, first)
			return nil, true
		}
		seen[key] = c
	}
	return &fieldSpec{from: cols}, true
}

// IDFrom lists the columns whose values make kind k's ids, as the profile
// names them; nil when k's id is a column of its own.
func (p *Profile) IDFrom(k ledger.Kind) []string {
	spec := p.kinds[k]
	if spec == nil || spec.fields["id"] == nil {
		return nil
	}
	return append([]string(nil), spec.fields["id"].from...)
}

// IDFromFields are, for each column of kind k's id (IDFrom), the field a
// slot's hashes (R17) keep its value under: the canonical field the kind
// maps it to, or the column's place in extra. nil when k's id is a column
// of its own.
func (p *Profile) IDFromFields(k ledger.Kind) []string {
	from := p.IDFrom(k)
	if from == nil {
		return nil
	}
	out := make([]string, len(from))
	for i, c := range from {
		out[i] = canon.ExtraField(c)
		for f, spec := range p.kinds[k].fields {
			for _, fc := range spec.columns {
				if normaliseHeader(fc) == normaliseHeader(c) {
					out[i] = f
				}
			}
		}
	}
	return out
}

// idFromMissing names the columns of an id made of columns that cols lack.
func (m *Mapper) idFromMissing(cols []reader.Col) []string {
	var missing []string
	for _, c := range m.idFrom {
		found := false
		for _, col := range cols {
			if normaliseHeader(col.Name) == normaliseHeader(c) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, c)
		}
	}
	return missing
}

// idFromRow is the id a row's values of the id's columns make (IDFromValues).
func (m *Mapper) idFromRow(cols []reader.Col) string {
	vals := make([]string, len(m.idFrom))
	for i, c := range m.idFrom {
		v := m.columnsByName.value(cols, normaliseHeader(c))
		if m.p.empty[v] {
			v = ""
		}
		vals[i] = v
	}
	return IDFromValues(vals)
}

// IDFromValues is the id that values make, in the order of the profile's
// from, the same in every run and on every machine (SPEC §4; README
// "Ids made of columns"): each value is trimmed, a spelling of empty
// ("null", "#N/A") is empty, and it is NFC-normalised; the id is the
// first 32 hex digits of the SHA-256 of, for each value in order, its
// length in bytes in decimal, ":" and the value — so ("ab", "c") and
// ("a", "bc") differ — after a readable prefix: the first value's letters
// and digits (ASCII, lower-case, accents dropped, others a "-", at most
// 24) and ".". All values empty make no id: "" (the record fails "missing
// id", R4).
func IDFromValues(values []string) string {
	var payload strings.Builder
	empty := true
	first := ""
	for i, v := range values {
		v = strings.TrimSpace(v)
		if emptySpelling(v) {
			v = ""
		}
		v = norm.NFC.String(v)
		if i == 0 {
			first = v
		}
		empty = empty && v == ""
		payload.WriteString(strconv.Itoa(len(v)))
		payload.WriteByte(':')
		payload.WriteString(v)
	}
	if empty {
		return ""
	}
	sum := sha256.Sum256([]byte(payload.String()))
	digest := hex.EncodeToString(sum[:16])
	if prefix := readablePrefix(first); prefix != "" {
		return prefix + "." + digest
	}
	return digest
}

// readablePrefix is what an id made of columns shows of its first value:
// its ASCII letters and digits, lower-case, accents dropped (NFKD), other
// runs of runes a single "-", at most 24 bytes, no "-" at either end.
func readablePrefix(v string) string {
	var b strings.Builder
	dash := false
	for _, r := range norm.NFKD.String(v) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue // an accent, apart from its letter
		case r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			sep := dash && b.Len() > 0
			if b.Len()+1+btoi(sep) > 24 {
				return b.String()
			}
			if sep {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(unicode.ToLower(r))
		default:
			dash = true
		}
	}
	return b.String()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
