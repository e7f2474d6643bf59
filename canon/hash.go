package canon

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"crmimport/ledger"
)

// Changes at the source (R17, SPEC §11). A final slot keeps, per field, a
// short hash of what was last written for it, and a digest of the whole:
// a rerun compares a record's with them to tell a record changed since
// (outdated) from one that is not, and the row's with them to tell a row
// edited by hand since (a conflict).
//
// The fields hashed are a record's canonical fields after validation and
// normalisation (Values: a domain as a host, a date as a date), but for its
// id, deleted and its links; its links as the parents' source ids, as read
// (resolved or not, so that completing a link, R6a, changes nothing); and
// its extra columns, each under "extra." and its name. An empty value is no
// field: a row's NULL and an export's empty cell hash alike.

// HashVersion is the version of the hashing: it changes whenever the
// normalisation of a field or the text of the hashes does, so that hashes
// of another version are re-based, never taken for a change.
const HashVersion = 1

// Hashes are one record's per-field hashes and their digest.
type Hashes struct {
	Fields map[string]string // field -> its value's hash, for each non-empty field
	Digest int64             // the whole, its top byte the version (DigestVersion)
}

// HashFields gathers what a record's hashes are made of: its fields' values
// as text, by name.
type HashFields map[string]string

// Set sets field f to v, as text; an empty value is no field.
func (h HashFields) Set(f string, v any) {
	if s := HashText(f, v); s != "" {
		h[f] = s
	} else {
		delete(h, f)
	}
}

// ExtraField is the name under which an extra column's value is hashed.
func ExtraField(col string) string { return "extra." + col }

// HashText is a value as it is hashed: text as it is, a flag as true or
// false, a number of a flag's column (a row's done) as a flag.
func HashText(f string, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	case int64:
		if IsFlagField(f) {
			return strconv.FormatBool(x != 0)
		}
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return ""
	}
}

// ExtraText is an extra value as it is hashed: text as it is, anything
// else as JSON.
func ExtraText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// ValueFields sets the canonical fields of kind k from values (a
// validated record's), but for its id, deleted and links.
func (h HashFields) ValueFields(k ledger.Kind, values Values) { setValueFields(k, values, h.Set) }

// ValueFields sets the canonical fields of kind k from values, as
// HashFields.ValueFields does.
func (h *Hasher) ValueFields(k ledger.Kind, values Values) { setValueFields(k, values, h.Set) }

func setValueFields(k ledger.Kind, values Values, set func(string, any)) {
	for _, f := range FieldsOf(k).Names {
		if Hashed(f) {
			set(f, values.Get(f))
		}
	}
}

// Hashed reports whether canonical field f is hashed as a value: every
// field but the id, deleted and the links.
func Hashed(f string) bool { return f != "id" && f != "deleted" && !strings.HasSuffix(f, "_id") }

// Hash makes the hashes of fields, in their place: h holds them after.
func (h HashFields) Hash() Hashes {
	for f, v := range h {
		h[f] = fieldHash(f, v)
	}
	return Hashes{Fields: h, Digest: digestOf(h)}
}

// FieldHash is the hash of field f holding v, as Hash makes it.
func FieldHash(f, v string) string { return fieldHash(f, v) }

// Seal makes the digest of h's fields again, after a field's hash was set
// by hand (a field whose value cannot be read back, kept as it was).
func (h *Hashes) Seal() { h.Digest = digestOf(h.Fields) }

// fieldHash is 48 bits of FNV-1a over the field's name and value, in eight
// characters.
func fieldHash(f, v string) string {
	var sum [hashWidth]byte
	fieldSum(&sum, f, v)
	return string(sum[:])
}

// fieldSum writes fieldHash(f, v) into dst, without allocating.
func fieldSum(dst *[hashWidth]byte, f, v string) {
	h := fnvString(fnvString(fnvOffset, f), "\x00")
	h = fnvString(h, v) // a body of megabytes is hashed where it lies, never copied
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], h)
	base64.RawURLEncoding.Encode(dst[:], b[:6])
}

// FNV-1a, 64 bits, over a string.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvString[T ~string | ~[]byte](h uint64, s T) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// digestOf is the digest of per-field hashes: 56 bits of FNV-1a over them
// in field order, under the version's byte.
func digestOf(fields map[string]string) int64 {
	names := make([]string, 0, len(fields))
	for f := range fields {
		names = append(names, f)
	}
	slices.Sort(names)
	h := uint64(fnvOffset)
	for _, f := range names {
		h = digestAdd(h, f, fields[f])
	}
	return digestSeal(h)
}

// digestAdd adds field f, whose hash is sum, to the digest being made.
func digestAdd[T ~string | ~[]byte](h uint64, f string, sum T) uint64 {
	return fnvString(fnvString(fnvString(fnvString(h, f), "\x00"), sum), "\x00")
}

// digestSeal is the digest made: 56 bits under the version's byte.
func digestSeal(h uint64) int64 { return int64(HashVersion)<<56 | int64(h&(1<<56-1)) }

// DigestVersion is the version of the hashing that made digest d (0: none).
func DigestVersion(d int64) int { return int(uint64(d) >> 56) }

// placed are the fields of kind k whose hashes the text of hashes holds by
// place, without their names: its canonical fields but the id and deleted
// (values and links), in the table of kinds' order — but for the fields a
// kind gained since slots first kept hashes (placedLast), which come after
// the others.
var placed = func() map[ledger.Kind][]string {
	out := map[ledger.Kind][]string{}
	for k, names := range fields {
		for _, f := range names {
			if f != "id" && f != "deleted" && !slices.Contains(placedLast[k], f) {
				out[k] = append(out[k], f)
			}
		}
		out[k] = append(out[k], placedLast[k]...)
	}
	return out
}()

// placedLast are the fields each kind gained after slots first kept their
// hashes, in the order they were added: a field added to a kind is added
// here, at the end, never elsewhere. The text of hashes holds its places,
// so that a text written before the kind had them keeps its meaning: it
// ends before their places, and reads them empty (DecodeHashes) — which
// they were, since no export could give them. A deal's status and
// pipeline came with schema 17, the owner_id of five
// kinds with schema 18, the lead_id of notes, activities and emails with
// schema 19.
// AddedFields are the fields kind k gained after its first version
// (placedLast), in the order they were added: a record written before
// holds none of them — in the text of hashes, and in a before-image
// (target.Restore gives them back empty).
func AddedFields(k ledger.Kind) []string { return slices.Clone(placedLast[k]) }

var placedLast = map[ledger.Kind][]string{
	ledger.Company:  {"owner_id"},
	ledger.Contact:  {"owner_id"},
	ledger.Deal:     {"status", "pipeline", "owner_id"},
	ledger.Note:     {"owner_id", "lead_id"},
	ledger.Activity: {"owner_id", "lead_id"},
	ledger.Email:    {"lead_id"},
}

// hashWidth is the width of one field's hash in the text of hashes.
const hashWidth = 8

// Encode writes the hashes of a record of kind k as its slot keeps them,
// short (a first run writes it with every slot): the version; the hashes
// of k's placed fields back to back, "." for an empty one; then each other
// field (an extra column, a link by name) with its name, in name order —
// "1 AbCdEfGh.XyZ…… extra.Owner=QwErTyUi".
func (h Hashes) Encode(k ledger.Kind) string {
	var b strings.Builder
	b.Grow(4 + len(h.Fields)*(hashWidth+1))
	b.WriteString(strconv.Itoa(HashVersion))
	b.WriteByte(' ')
	pl := placed[k]
	for _, f := range pl {
		if v, ok := h.Fields[f]; ok {
			b.WriteString(v)
		} else {
			b.WriteByte('.')
		}
	}
	var names []string
	for f := range h.Fields {
		if !slices.Contains(pl, f) {
			names = append(names, f)
		}
	}
	slices.Sort(names)
	for _, f := range names {
		b.WriteByte(' ')
		b.WriteString(nameEscaper.Replace(f))
		b.WriteByte('=')
		b.WriteString(h.Fields[f])
	}
	return b.String()
}

// A field's name in the text of hashes: an extra column's name may hold a
// space or an equals sign.
var (
	nameEscaper   = strings.NewReplacer("%", "%25", " ", "%20", "=", "%3D", "\n", "%0A", "\r", "%0D")
	nameUnescaper = strings.NewReplacer("%25", "%", "%20", " ", "%3D", "=", "%0A", "\n", "%0D", "\r")
)

// DecodeHashes reads what Encode wrote of a record of kind k; ok is false
// for text of another version, or none.
func DecodeHashes(k ledger.Kind, s string) (Hashes, bool) {
	parts := strings.Split(s, " ")
	if len(parts) < 2 || parts[0] != strconv.Itoa(HashVersion) {
		return Hashes{}, false
	}
	h := Hashes{Fields: make(map[string]string, len(parts))}
	rest := parts[1]
	for _, f := range placed[k] {
		switch {
		case strings.HasPrefix(rest, "."):
			rest = rest[1:]
		case len(rest) >= hashWidth:
			h.Fields[f], rest = rest[:hashWidth], rest[hashWidth:]
		case rest == "" && slices.Contains(placedLast[k], f):
			// Written before the kind gained its last fields (placedLast):
			// they are empty.
		default:
			return Hashes{}, false
		}
	}
	if rest != "" {
		return Hashes{}, false
	}
	for _, p := range parts[2:] {
		f, v, ok := strings.Cut(p, "=")
		if !ok {
			return Hashes{}, false
		}
		h.Fields[nameUnescaper.Replace(f)] = v
	}
	h.Digest = digestOf(h.Fields)
	return h, true
}

// Differ are the fields whose hashes differ between a and b (one has a
// field the other has not, or a different hash), in order.
func Differ(a, b Hashes) []string {
	var out []string
	for f, v := range a.Fields {
		if b.Fields[f] != v {
			out = append(out, f)
		}
	}
	for f := range b.Fields {
		if _, ok := a.Fields[f]; !ok {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// Hasher makes what Hash and Encode make of a record's fields — the same
// digest and the same text — without a map: a run reads hundreds of
// thousands of records and compares each by its digest alone; the fields'
// hashes by name (DecodeHashes of the text) are made only for one that
// differs.
type Hasher struct {
	kind   ledger.Kind
	pl     *placedFields
	set    []bool
	sums   [][hashWidth]byte
	others []namedHash
}

type namedHash struct {
	name string
	sum  [hashWidth]byte
}

// placedFields are a kind's placed fields, by place and by name, and
// their places in name order (the digest's).
type placedFields struct {
	names  []string
	at     map[string]int
	sorted []int
}

var placedOf = func() map[ledger.Kind]*placedFields {
	out := map[ledger.Kind]*placedFields{}
	for k, names := range placed {
		p := &placedFields{names: names, at: map[string]int{}}
		for i, f := range names {
			p.at[f] = i
			p.sorted = append(p.sorted, i)
		}
		slices.SortFunc(p.sorted, func(a, b int) int { return strings.Compare(names[a], names[b]) })
		out[k] = p
	}
	return out
}()

// NewHasher is a Hasher of a record of kind k, holding no field.
func NewHasher(k ledger.Kind) *Hasher {
	pl := placedOf[k]
	if pl == nil {
		pl = &placedFields{at: map[string]int{}}
	}
	return &Hasher{kind: k, pl: pl, set: make([]bool, len(pl.names)), sums: make([][hashWidth]byte, len(pl.names))}
}

// Set sets field f to v, as HashFields.Set does: an empty value is no field.
func (h *Hasher) Set(f string, v any) {
	h.SetText(f, HashText(f, v))
}

// SetText sets field f to the text s ("" is no field).
func (h *Hasher) SetText(f, s string) {
	if i, ok := h.pl.at[f]; ok {
		h.set[i] = s != ""
		if s != "" {
			fieldSum(&h.sums[i], f, s)
		}
		return
	}
	at := slices.IndexFunc(h.others, func(n namedHash) bool { return n.name == f })
	switch {
	case s == "" && at >= 0:
		h.others = slices.Delete(h.others, at, at+1)
	case s == "":
	case at >= 0:
		fieldSum(&h.others[at].sum, f, s)
	default:
		h.others = append(h.others, namedHash{name: f})
		fieldSum(&h.others[len(h.others)-1].sum, f, s)
	}
}

// Has reports whether field f holds a value.
func (h *Hasher) Has(f string) bool {
	if i, ok := h.pl.at[f]; ok {
		return h.set[i]
	}
	return slices.ContainsFunc(h.others, func(n namedHash) bool { return n.name == f })
}

// Sum is the digest and the text of the fields set: Hash's digest and
// Encode's text of the same fields.
func (h *Hasher) Sum() (int64, string) {
	slices.SortFunc(h.others, func(a, b namedHash) int { return strings.Compare(a.name, b.name) })
	// The digest goes over every field in name order: the placed ones'
	// order merged with the others'.
	d := uint64(fnvOffset)
	add := func(f string, sum *[hashWidth]byte) { d = digestAdd(d, f, sum[:]) }
	o := 0
	for _, i := range h.pl.sorted {
		if !h.set[i] {
			continue
		}
		for ; o < len(h.others) && h.others[o].name < h.pl.names[i]; o++ {
			add(h.others[o].name, &h.others[o].sum)
		}
		add(h.pl.names[i], &h.sums[i])
	}
	for ; o < len(h.others); o++ {
		add(h.others[o].name, &h.others[o].sum)
	}
	var b strings.Builder
	b.Grow(4 + len(h.set)*hashWidth + len(h.others)*(2*hashWidth+2))
	b.WriteString(strconv.Itoa(HashVersion))
	b.WriteByte(' ')
	for i := range h.set {
		if h.set[i] {
			b.Write(h.sums[i][:])
		} else {
			b.WriteByte('.')
		}
	}
	for _, n := range h.others {
		b.WriteByte(' ')
		b.WriteString(nameEscaper.Replace(n.name))
		b.WriteByte('=')
		b.Write(n.sum[:])
	}
	return digestSeal(d), b.String()
}

// Reset makes h hold no field again, to hash another record of its kind.
func (h *Hasher) Reset() {
	clear(h.set)
	h.others = h.others[:0]
}

// Differs are the fields whose hashes differ between h and stored, the
// text of hashes of a record of h's kind (Encode's) — one holds a field
// the other has not, or another hash — but those skip names, in name
// order: what Differ says of DecodeHashes(stored) and h's hashes with
// every skipped field taken from stored, without a map (an undo asks it
// of every row it removes). ok is false for text of another version, or
// none.
func (h *Hasher) Differs(stored string, skip func(f string) bool) (fields []string, ok bool) {
	ver, rest, found := strings.Cut(stored, " ")
	if !found || ver != strconv.Itoa(HashVersion) {
		return nil, false
	}
	byPlace, named, _ := strings.Cut(rest, " ")
	at := 0
	for i, f := range h.pl.names {
		var was string
		switch {
		case at < len(byPlace) && byPlace[at] == '.':
			at++
		case len(byPlace)-at >= hashWidth:
			was, at = byPlace[at:at+hashWidth], at+hashWidth
		case at == len(byPlace) && slices.Contains(placedLast[h.kind], f):
			// written before the kind gained it: empty (DecodeHashes)
		default:
			return nil, false
		}
		if skip(f) {
			continue
		}
		if (was != "") != h.set[i] || (was != "" && was != string(h.sums[i][:])) {
			fields = append(fields, f)
		}
	}
	if at != len(byPlace) {
		return nil, false
	}
	var seen []bool // h.others found in stored, by place
	if len(h.others) > 0 {
		seen = make([]bool, len(h.others))
	}
	for named != "" {
		var part string
		part, named, _ = strings.Cut(named, " ")
		name, sum, found := strings.Cut(part, "=")
		if !found {
			return nil, false
		}
		if strings.IndexByte(name, '%') >= 0 {
			name = nameUnescaper.Replace(name)
		}
		if skip(name) {
			continue
		}
		o := slices.IndexFunc(h.others, func(n namedHash) bool { return n.name == name })
		if o >= 0 {
			seen[o] = true
		}
		if o < 0 || sum != string(h.others[o].sum[:]) {
			fields = append(fields, name)
		}
	}
	for o, n := range h.others {
		if !seen[o] && !skip(n.name) {
			fields = append(fields, n.name)
		}
	}
	slices.Sort(fields)
	return fields, true
}
