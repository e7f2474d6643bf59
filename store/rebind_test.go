package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRebind(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"none", `SELECT 1`, `SELECT 1`},
		{"bare", `SELECT ?, ?`, `SELECT $1, $2`},
		{"numbered", `WHERE a = ?2 AND b = ?1`, `WHERE a = $2 AND b = $1`},
		{"bare after numbered", `VALUES (?1, ?6, ?, ?)`, `VALUES ($1, $6, $7, $8)`},
		{"numbered again", `?1 ?2 ?1 ?`, `$1 $2 $1 $3`},
		{"in a literal", `SELECT '?', "a?b", ? WHERE x = 'it''s ?1'`, `SELECT '?', "a?b", $1 WHERE x = 'it''s ?1'`},
		{"comments", "SELECT ? -- why ?\n, ? /* ?2 */ , ?", "SELECT $1 -- why ?\n, $2 /* ?2 */ , $3"},
		{"open literal", `SELECT ?, 'no end ?`, `SELECT $1, 'no end ?`},
		{"json path", `json_extract(options, '$.profile_file') = ?`, `json_extract(options, '$.profile_file') = $1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, Rebind(c.in))
		})
	}
}

// The claim of SPEC §6, as the ledger writes it for two slots, numbers its
// shared values ?1-?6 and its rows' values after them.
func TestRebindTheClaim(t *testing.T) {
	in := `INSERT INTO migration_records (a) SELECT ?1, ?2, column1 FROM (VALUES (?, ?), (?, ?)) WHERE true ON CONFLICT DO NOTHING`
	require.Equal(t, `INSERT INTO migration_records (a) SELECT $1, $2, column1 FROM (VALUES ($3, $4), ($5, $6)) WHERE true ON CONFLICT DO NOTHING`, Rebind(in))
}
