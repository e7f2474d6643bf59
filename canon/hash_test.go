package canon_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/ledger"
)

// TestHashes (R17): values that normalise alike hash alike (a URL and its
// host: what Validate makes equal is equal), an empty value is no field, a
// change names its field, and
// the text round-trips, names with spaces and equals signs included.
func TestHashes(t *testing.T) {
	t.Parallel()
	hash := func(domain, phone, extra string) canon.Hashes {
		v, bad := canon.Validate(ledger.Company, []string{"co1", "Acme", domain, phone, "", "", ""})
		require.Empty(t, bad)
		h := canon.HashFields{}
		h.ValueFields(ledger.Company, v)
		h.Set(canon.ExtraField("Contact owner = me"), extra)
		return h.Hash()
	}
	a := hash("https://www.Acme.example.com/about", "", "Ann")
	b := hash("acme.example.com", "", "Ann")
	require.Equal(t, a, b, "a website and its host are one domain (SPEC §11)")
	require.Equal(t, canon.HashVersion, canon.DigestVersion(a.Digest))

	c := hash("acme.example.com", "555", "Ann")
	require.NotEqual(t, a.Digest, c.Digest)
	require.Equal(t, []string{"phone"}, canon.Differ(a, c), "an empty value is no field; a new one differs")
	d := hash("acme.example.com", "", "Bob")
	require.Equal(t, []string{"extra.Contact owner = me"}, canon.Differ(a, d))

	text := c.Encode(ledger.Company)
	back, ok := canon.DecodeHashes(ledger.Company, text)
	require.True(t, ok)
	require.Equal(t, c, back, "the text a slot keeps gives the same hashes and digest")
	require.Regexp(t, `^1 [A-Za-z0-9_-]{8}[A-Za-z0-9_-]{8}[A-Za-z0-9_-]{8}\.\. extra\.Contact%20owner%20%3D%20me=[A-Za-z0-9_-]{8}$`, text,
		"name, domain and phone by place, the empty industry and created_at as dots, an extra by its name")
	_, ok = canon.DecodeHashes(ledger.Company, "0 ........")
	require.False(t, ok, "another version's text is not read as this one's")
	_, ok = canon.DecodeHashes(ledger.Company, "1 AbCd")
	require.False(t, ok, "a text cut short is not read")
}
