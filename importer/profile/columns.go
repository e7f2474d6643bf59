package profile

// Finding columns by name, body file templates, and JSON objects
// flattened into dotted columns.

import (
	"encoding/json"
	"strings"

	"crmimport/importer/reader"
)

// picker finds columns by their normalised name in rows that mostly share
// one header: the index is made once per header, not per row.
type picker struct {
	names []string
	index map[string]int
}

// value is the trimmed value of the column whose normalised name is key.
func (p *picker) value(cols []reader.Col, key string) string {
	same := p.index != nil && len(p.names) == len(cols)
	for i := 0; same && i < len(cols); i++ {
		same = cols[i].Name == p.names[i]
	}
	if !same {
		p.names = make([]string, len(cols))
		p.index = make(map[string]int, len(cols))
		for i, c := range cols {
			p.names[i] = c.Name
			if n := normaliseHeader(c.Name); n != "" {
				if _, taken := p.index[n]; !taken {
					p.index[n] = i
				}
			}
		}
	}
	if i, ok := p.index[key]; ok {
		return strings.TrimSpace(cols[i].Value)
	}
	return ""
}

// template is a body_file template taken apart once: literal text, and
// the normalised names of the columns in braces.
type template struct {
	parts []string // literal, key, literal, key, …, literal
}

func parseTemplate(t string) template {
	var parts []string
	for {
		i := strings.IndexByte(t, '{')
		j := strings.IndexByte(t, '}')
		if i < 0 || j < i {
			return template{parts: append(parts, t)}
		}
		parts = append(parts, t[:i], normaliseHeader(t[i+1:j]))
		t = t[j+1:]
	}
}

// expand fills the template with the row's values.
func (t template) expand(p *picker, cols []reader.Col) string {
	var b strings.Builder
	for i, part := range t.parts {
		if i%2 == 0 {
			b.WriteString(part)
		} else {
			b.WriteString(p.value(cols, part))
		}
	}
	return b.String()
}

// flatten turns the JSON objects under the given keys into dotted columns
// ({"properties":{"email":"a@b"}} gives properties.email), recursively;
// arrays stay nested values. Rows without such a key are returned as they
// are.
func flatten(cols []reader.Col, roots map[string]bool) []reader.Col {
	at := -1
	for i, c := range cols {
		if c.Nested && roots[c.Name] && strings.HasPrefix(c.Value, "{") {
			at = i
			break
		}
	}
	if at < 0 {
		return cols
	}
	out := make([]reader.Col, 0, len(cols)+8)
	out = append(out, cols[:at]...)
	for _, c := range cols[at:] {
		if c.Nested && roots[c.Name] && strings.HasPrefix(c.Value, "{") {
			out = flattenObject(out, c.Name, c.Value)
			continue
		}
		out = append(out, c)
	}
	return out
}

// FlattenAll turns every JSON object of a row into dotted columns
// ({"properties":{"email":…}} gives properties.email), as a mapper does
// for the objects its profile's columns name; arrays stay whole. A draft
// profile is suggested from them (package suggest).
func FlattenAll(cols []reader.Col) []reader.Col {
	var out []reader.Col
	for _, c := range cols {
		if c.Nested && strings.HasPrefix(c.Value, "{") {
			out = flattenObject(out, c.Name, c.Value)
			continue
		}
		out = append(out, c)
	}
	return out
}

// flattenObject appends the keys of a JSON object as prefix.key columns,
// in order.
func flattenObject(out []reader.Col, prefix, obj string) []reader.Col {
	dec := json.NewDecoder(strings.NewReader(obj))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return append(out, reader.Col{Name: prefix, Value: obj, Nested: true})
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			break
		}
		name := prefix + "." + key
		switch raw[0] {
		case '{':
			out = flattenObject(out, name, string(raw))
		case '[':
			out = append(out, reader.Col{Name: name, Value: string(raw), Nested: true})
		case '"':
			var s string
			_ = json.Unmarshal(raw, &s) // valid: the reader compacted it
			out = append(out, reader.Col{Name: name, Value: s})
		case 'n':
			out = append(out, reader.Col{Name: name})
		default:
			out = append(out, reader.Col{Name: name, Value: string(raw)})
		}
	}
	return out
}
