package canon_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
)

func TestParseDate(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"2024-03-01":                "2024-03-01",
		"2024-03-01T10:00:00Z":      "2024-03-01T10:00:00Z",
		"2024-03-01T10:00:00+02:00": "2024-03-01T10:00:00+02:00",
		"2024-03-01 10:00:00":       "2024-03-01T10:00:00",
		"2024-03-01T10:00:00.250":   "2024-03-01T10:00:00.25",
		"2024-03-01T10:00":          "2024-03-01T10:00:00",
	} {
		got, ok := canon.ParseDate(in)
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"2/5/24 1:51", "31/12/2024", "2024-13-01", "next Tuesday", "2024-02-30", "20240301"} {
		_, ok := canon.ParseDate(bad)
		require.False(t, ok, bad)
	}
}
