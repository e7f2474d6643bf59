package store

import (
	"fmt"
	"net/url"
	"strings"
)

// pgQuery is the query of a postgres:// address as pgx and libpq read it:
// name=value pairs between '&', each percent-decoded, and a '+' a '+'.
// Go's url.Values reads a '+' as a space and writes a space as a '+', so
// an address read and written back through it named another schema to
// the server than the one crmimport checked: search_path=%22My%20Schema%22
// was checked as "My Schema" and given as "My+Schema" (issue 23 item 2).
type pgQuery []pgParam

type pgParam struct{ key, value string }

// parsePGQuery reads raw, an address's query without its '?'.
func parsePGQuery(raw string) (pgQuery, error) {
	var q pgQuery
	for _, pair := range strings.Split(raw, "&") {
		if pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("%q has no '=' (the address's parameters are NAME=VALUE, joined by &)", pair)
		}
		key, err := url.PathUnescape(k)
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %w", k, err)
		}
		value, err := url.PathUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", key, err)
		}
		q = append(q, pgParam{key, value})
	}
	return q, nil
}

// get is the value of key: the last one given, as pgx takes it.
func (q pgQuery) get(key string) (string, bool) {
	for i := len(q) - 1; i >= 0; i-- {
		if q[i].key == key {
			return q[i].value, true
		}
	}
	return "", false
}

// set gives key the one value.
func (q pgQuery) set(key, value string) pgQuery {
	return append(q.without(key), pgParam{key, value})
}

// without is the query without key.
func (q pgQuery) without(key string) pgQuery {
	out := pgQuery{}
	for _, p := range q {
		if p.key != key {
			out = append(out, p)
		}
	}
	return out
}

// encode writes the query back as pgx reads it: a space as %20, a '+' as
// %2B.
func (q pgQuery) encode() string {
	var parts []string
	for _, p := range q {
		parts = append(parts, pgEscape(p.key)+"="+pgEscape(p.value))
	}
	return strings.Join(parts, "&")
}

// pgEscape escapes s for an address's query: url.QueryEscape, which
// writes a '+' as %2B, but for a space, %20 where it writes '+'.
func pgEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}
