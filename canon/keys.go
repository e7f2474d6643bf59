package canon

import "strings"

// EmailKey is the natural key of a contact (R5): the address trimmed and
// lower-cased; "" never matches.
func EmailKey(email string) string {
	return strings.ToLower(strings.TrimSpace(email))
}

// DomainKey is the natural key of a company (R5): the domain lower-cased,
// without scheme, "www.", port, path or trailing dot; "" never matches.
func DomainKey(domain string) string {
	d := strings.ToLower(strings.TrimSpace(domain))
	if _, rest, ok := strings.Cut(d, "://"); ok {
		d = rest
	}
	if i := strings.IndexAny(d, "/?#"); i >= 0 {
		d = d[:i]
	}
	if i := strings.LastIndexByte(d, '@'); i >= 0 {
		d = d[i+1:]
	}
	if i := strings.IndexByte(d, ':'); i >= 0 {
		d = d[:i]
	}
	d = strings.TrimSuffix(d, ".")
	d = strings.TrimPrefix(d, "www.")
	return d
}
