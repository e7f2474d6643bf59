package runs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFoldTenant: the names a person takes for one tenant fold to one
// (issue 27 item 3: NFKC, case, spaces and punctuation), and names that
// are different tenants do not.
func TestFoldTenant(t *testing.T) {
	t.Parallel()
	same := []struct{ a, b string }{
		{"Acme GmbH", "acme gmbh"},
		{"Acme GmbH", "ACME-GmbH"},
		{"Acme GmbH", "Ａｃｍｅ GmbH"}, // full-width letters (NFKC)
		{"Acme GmbH", "  Acme   GmbH "},
		{"Acme GmbH", "Acme\u00a0GmbH"},  // a no-break space
		{"Acme GmbH", "Acme\u200bGmbH"},  // a zero-width space (a format character)
		{"Acme GmbH", "acme_gmbh"},       // an underscore is punctuation
		{"Acme GmbH", "Acme G.m.b.H."},   // so are dots
		{"Straße AG", "STRASSE AG"},      // full case folding: ß is ss
		{"Oﬃce Tools", "Office Tools"},   // a ligature is its letters (NFKC)
		{"Café Noir", "Cafe\u0301 noir"}, // one é, or e and a combining accent (NFKC composes)
		{"Acme & Co", "Acme Co"},         // & is punctuation
		{"acme", "acme"},
	}
	for _, tt := range same {
		require.Equal(t, FoldTenant(tt.a), FoldTenant(tt.b), "%q and %q are one tenant to a person", tt.a, tt.b)
	}
	require.Equal(t, "acmegmbh", FoldTenant("ACME-GmbH"))
	apart := []struct{ a, b string }{
		{"Acme GmbH", "Acme AG"},
		{"Acme", "Acme 2"},
		{"Café", "Cafe"}, // an accent is a letter of its own
		{"acme", "acne"},
		{"Acme+", "Acme"}, // + is a symbol, not punctuation
	}
	for _, tt := range apart {
		require.NotEqual(t, FoldTenant(tt.a), FoldTenant(tt.b), "%q and %q are two tenants", tt.a, tt.b)
	}
}
