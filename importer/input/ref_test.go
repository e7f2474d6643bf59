package input

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/input/inputtest"
)

func TestParseRef(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	weird := filepath.Join(dir, "wow!", "export")
	require.NoError(t, os.MkdirAll(weird, 0o700))
	z := filepath.Join(weird, "WE_1.ZIP")
	inputtest.WriteZip(t, z, [2]string{"Account.csv", "Id\n"})
	for in, want := range map[string]inputRef{
		z + "!/Account.csv":                  {path: z, entry: "Account.csv"},
		z + "!/sub/dir/Account.csv":          {path: z, entry: "sub/dir/Account.csv"},
		filepath.Join(weird, "a.csv"):        {path: filepath.Join(weird, "a.csv")},
		"/gone/WE_1.zip!/Account.csv":        {path: "/gone/WE_1.zip", entry: "Account.csv"},
		"/gone/x!/y.zip!/Contact.csv":        {path: "/gone/x!/y.zip", entry: "Contact.csv"},
		filepath.Join(dir, "contacts.csv"):   {path: filepath.Join(dir, "contacts.csv")},
		filepath.Join(dir, "a!/b!/c!/d.csv"): {path: filepath.Join(dir, "a!/b!/c!/d.csv")},
	} {
		require.Equal(t, want, parseRef(in), in)
		require.Equal(t, in, parseRef(in).String())
	}
	require.Equal(t, "WE_1.ZIP!/Account.csv", Name(z+"!/Account.csv"))
	require.Equal(t, "contacts.csv.gz", Name("/x/contacts.csv.gz"))
}
