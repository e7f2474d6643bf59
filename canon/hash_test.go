package canon_test

import (
	"math/rand/v2"
	"slices"
	"strings"
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
		v, bad := canon.Validate(ledger.Company, []string{"co1", "Acme", domain, phone, "", "", "", ""})
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
	require.Regexp(t, `^1 [A-Za-z0-9_-]{8}[A-Za-z0-9_-]{8}[A-Za-z0-9_-]{8}\.\.\. extra\.Contact%20owner%20%3D%20me=[A-Za-z0-9_-]{8}$`, text,
		"name, domain and phone by place, the empty industry, created_at and owner_id as dots, an extra by its name")
	_, ok = canon.DecodeHashes(ledger.Company, "0 ........")
	require.False(t, ok, "another version's text is not read as this one's")
	_, ok = canon.DecodeHashes(ledger.Company, "1 AbCd")
	require.False(t, ok, "a text cut short is not read")
}

// TestHasherIsHash: the Hasher a run reads records with makes, for any
// fields of any kind, the digest and text that HashFields.Hash and Encode
// make of the same fields — the version-1 hashes already kept in slots —
// and a field set twice or emptied counts as HashFields.Set counts it.
func TestHasherIsHash(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(25, 8))
	names := []string{"extra.Owner", "extra.a b=c", "extra.Z", "company_id~", "contact_id~", "extra.%20", "a", "zz", "extra.name"}
	values := []string{"", "x", "Acme", "0", "Null", "long " + strings.Repeat("body ", 40)}
	for n := 0; n < 2000; n++ {
		k := canon.Kinds()[rng.IntN(len(canon.Kinds()))]
		fields := append(slices.Clone(canon.FieldsOf(k).Names), names...)
		ref, h := canon.HashFields{}, canon.NewHasher(k)
		for range rng.IntN(3 * len(fields)) {
			f, v := fields[rng.IntN(len(fields))], values[rng.IntN(len(values))]
			ref.Set(f, v)
			h.SetText(f, v)
			require.Equal(t, ref[f] != "", h.Has(f))
		}
		want := ref.Hash()
		digest, text := h.Sum()
		require.Equal(t, want.Digest, digest, "case %d (%s): the digest", n, k)
		require.Equal(t, want.Encode(k), text, "case %d (%s): the text", n, k)
		back, ok := canon.DecodeHashes(k, text)
		require.True(t, ok)
		require.Equal(t, want, back)
	}
}

// TestHashesKeptBeforeADealHadAStatusReadAsTheyWere: a deal's status and
// pipeline came after slots first kept hashes (schema 17). A text written
// before holds no place for them: it reads as it did, the two empty, and
// its digest is the one its slot keeps — so a deal imported before is
// unchanged when its export still says nothing of them, and outdated in
// status alone when it now does (R17).
func TestHashesKeptBeforeADealHadAStatusReadAsTheyWere(t *testing.T) {
	t.Parallel()
	h := canon.HashFields{}
	h.Set("name", "Renewal")
	h.Set("stage", "Negotiation")
	h.Set("company_id", "co1")
	before := h.Hash()
	text := before.Encode(ledger.Deal)
	require.True(t, strings.HasSuffix(text, ".."), "the new text holds the two places, empty: %q", text)
	old := strings.TrimSuffix(text, "..") // as a binary before schema 17 wrote it
	back, ok := canon.DecodeHashes(ledger.Deal, old)
	require.True(t, ok, "a text written before the deal had a status is read")
	require.Equal(t, before, back)

	h2 := canon.HashFields{}
	h2.Set("name", "Renewal")
	h2.Set("stage", "Negotiation")
	h2.Set("company_id", "co1")
	h2.Set("status", "won")
	require.Equal(t, []string{"status"}, canon.Differ(back, h2.Hash()))

	_, ok = canon.DecodeHashes(ledger.Company, strings.TrimSuffix(canon.Hashes{Fields: map[string]string{}}.Encode(ledger.Company), ".."))
	require.False(t, ok, "a company's text cut short of its created_at is still not read: only fields added since (its owner) may be missing")
}
