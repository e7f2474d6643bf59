package profile

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/importer/input"
	"crmimport/importer/input/inputtest"
)

// TestEncryptedBodyFile: an encrypted body file (a password-protected
// zip) fails its record alone, naming the zip and the entry and saying to
// decrypt it first, as planning says of an encrypted export file
// (importer's TestZipEncryptedEntry).
func TestEncryptedBodyFile(t *testing.T) {
	t.Parallel()
	z := filepath.Join(t.TempDir(), "export.zip")
	inputtest.WriteRawZip(t, z, inputtest.RawEntry{Name: "ContentVersion/0685g00000Cv001AAB", Data: "<p>one</p>", Encrypted: true})
	files, err := input.OpenFolder(z + "!/ContentVersion/")
	require.NoError(t, err)
	a := &sideFiles{bodies: []bodySource{{folder: "contentversion", files: files}}}
	defer a.close()
	_, err = a.readBody("ContentVersion/0685g00000Cv001AAB")
	require.EqualError(t, err, "export.zip!/ContentVersion/0685g00000Cv001AAB: is encrypted (the zip is password-protected), "+
		"and crmimport cannot decrypt it: extract the zip with its password and pass the folder, or zip the files again without one")
}
