package reader

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A record read again alone from its span (RecordAt) is the record that
// reading the file through gives: its line, values, reason and raw text.
// Every CSV file of the fixtures, and files with what moves a record's
// place in the file (BOM, sep= line, blank lines, CR line ends, quoted
// line breaks, bad quotes at the end).
func TestRecordAtSpan(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{
		"bom_sep_blank.csv": []byte("\xEF\xBB\xBFsep=;\r\n\r\n\r\nid;name\r\n\r\n1;a\r\n2;\"multi\r\nline\"\r\n  ;  \r\n3;b;extra\r\n4;\"bad\"x\r\n5;c"),
		"bare_cr.csv":       []byte("id,body\r1,\"one\rtwo\"\r\r2,x\"y\r3,z\r"),
		"unterminated.csv":  []byte("id,body\n1,fine\n2,\"never closed\n3,eaten\n"),
		"stray_byte.csv":    []byte("id,name\n1,caf\xe9\n2,ok\n"),
	}
	err := filepath.WalkDir("../../fixtures", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.EqualFold(filepath.Ext(p), ".csv") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[p] = b
		return nil
	})
	require.NoError(t, err)
	spans := 0
	for name, data := range files {
		for _, enc := range []string{"", "windows-1252"} {
			rr, err := NewRowReader(strings.NewReader(string(data)), ReadOptions{Name: filepath.Base(name), Format: FormatCSV, Encoding: enc})
			if err != nil {
				continue // a file that is not CSV: no records to place
			}
			again, err := NewRowReader(strings.NewReader(string(data)), ReadOptions{Name: filepath.Base(name), Format: FormatCSV, Encoding: enc})
			require.NoError(t, err)
			require.Equal(t, enc == "", rr.Spans(), name)
			for {
				row, err := rr.Next()
				if errors.Is(err, io.EOF) || err != nil && !rr.Spans() {
					break
				}
				var fe *FileError
				if errors.As(err, &fe) {
					break
				}
				require.NoError(t, err)
				if !rr.Spans() {
					require.Zero(t, row.End, name)
					continue
				}
				require.Greater(t, row.End, row.Start, "%s:%d", name, row.Line)
				got, err := again.RecordAt(data[row.Start:row.End], row.Line)
				require.NoError(t, err, "%s:%d", name, row.Line)
				got.Start, got.End = row.Start, row.End
				require.Equal(t, row, got, "%s:%d", name, row.Line)
				spans++
			}
		}
	}
	require.Greater(t, spans, 500)
}
