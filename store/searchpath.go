package store

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The schema of a postgres:// address is the first name of its
// ?search_path= (issue 23 item 2). PostgreSQL reads a search_path as a
// list of identifiers: a name in double quotes as it is written ("" for a
// quote), any other folded to lower case and cut to 63 bytes. crmimport
// read the name as written, so ?search_path=Shop was checked as schema
// "Shop" (empty: not another application's) while the server made the
// tables in shop, another application's schema, beside its tables.
//
// crmimport now reads the list as the server does, refuses a name that
// the server would read otherwise than it is written (Shop, which it reads
// shop: the user who wrote it may mean either, and two customers' Acme and
// ACME would be one schema), and hands the server the one schema it
// checked, quoted (pgAddress.url), so that there is one reading of the
// name, never two.

// maxIdentifier is the longest name PostgreSQL keeps (NAMEDATALEN - 1
// bytes); it cuts a longer one short, to another name.
const maxIdentifier = 63

// schemaOf is the schema that search_path, as written in an address,
// names: its first name, read as the server reads it. A name that the
// server would read otherwise than it is written, or that is not a schema
// of crmimport's to name ($user, pg_temp and the pg_ names PostgreSQL
// keeps for itself), is refused, saying what to write.
func schemaOf(searchPath string) (string, error) {
	names, quoted, err := splitIdentifiers(searchPath)
	if err != nil {
		return "", err
	}
	if len(names) == 0 {
		return DefaultPostgresSchema, nil
	}
	name := names[0]
	switch folded := foldIdentifier(name); {
	case !quoted[0] && folded != name:
		return "", fmt.Errorf("search_path=%s names schema %s to PostgreSQL, which folds a name written without double quotes to lower case: "+
			"write search_path=%s for that schema, or search_path=%s (%s in the address) for a schema named %s, capitals and all",
			name, folded, folded, pgx.Identifier{name}.Sanitize(), pgEscape(pgx.Identifier{name}.Sanitize()), name)
	case len(name) > maxIdentifier:
		return "", fmt.Errorf("search_path=%s: a schema name is at most %d bytes on PostgreSQL, which would cut this one short to another name; name a shorter schema",
			name, maxIdentifier)
	case name == "$user" || strings.HasPrefix(name, "pg_"):
		return "", fmt.Errorf("search_path=%s: name the schema of crmimport's tables itself (PostgreSQL keeps $user and the names that begin with pg_ for its own use)", name)
	}
	return name, nil
}

// splitIdentifiers splits a search_path into its names as PostgreSQL does
// (SplitIdentifierString): names separated by commas, white space around
// them ignored, a name in double quotes kept as written (quoted[i]) and
// any other folded to lower case by the server — which this function
// leaves to its caller, to tell the two readings apart.
func splitIdentifiers(s string) (names []string, quoted []bool, err error) {
	bad := func(why string) error {
		return fmt.Errorf("search_path=%s is not a list of schema names: %s "+
			"(a name with capitals, spaces or commas goes in double quotes, %%22My%%20Schema%%22 in the address)", s, why)
	}
	rest := strings.TrimLeft(s, whiteSpace)
	if rest == "" {
		return nil, nil, nil
	}
	for {
		var name string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			i := 1
			for {
				j := strings.IndexByte(rest[i:], '"')
				if j < 0 {
					return nil, nil, bad("a double quote is not closed")
				}
				b.WriteString(rest[i : i+j])
				i += j + 1
				if !strings.HasPrefix(rest[i:], `"`) {
					break
				}
				b.WriteByte('"') // "" is a quote inside the name
				i++
			}
			name, rest = b.String(), rest[i:]
			if name == "" {
				return nil, nil, bad("an empty name")
			}
			quoted = append(quoted, true)
		} else {
			end := strings.IndexAny(rest, ","+whiteSpace)
			if end < 0 {
				end = len(rest)
			}
			if end == 0 {
				return nil, nil, bad("an empty name")
			}
			name, rest = rest[:end], rest[end:]
			quoted = append(quoted, false)
		}
		names = append(names, name)
		rest = strings.TrimLeft(rest, whiteSpace)
		switch {
		case rest == "":
			return names, quoted, nil
		case rest[0] == ',':
			rest = strings.TrimLeft(rest[1:], whiteSpace)
		default:
			return nil, nil, bad(fmt.Sprintf("%q follows the name %s", rest, name))
		}
	}
}

// whiteSpace is what PostgreSQL's scanner calls white space.
const whiteSpace = " \t\n\r\f\v"

// foldIdentifier is a name written without quotes as PostgreSQL reads it
// in a UTF-8 database: ASCII letters in lower case, every other byte as it
// is (downcase_identifier).
func foldIdentifier(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
