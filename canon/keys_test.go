package canon_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
)

func TestDomainKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"acme.example":                      "acme.example",
		"  ACME.example ":                   "acme.example",
		"https://www.acme.example/":         "acme.example",
		"http://WWW.Acme.Example/contact?x": "acme.example",
		"www.acme.example:8080":             "acme.example",
		"acme.example.":                     "acme.example",
		"info@acme.example":                 "acme.example",
		"":                                  "",
		"wwwacme.example":                   "wwwacme.example",
	} {
		require.Equal(t, want, canon.DomainKey(in), in)
	}
	require.Equal(t, "ann@example.com", canon.EmailKey(" Ann@Example.COM\t"))
}
