// Package reader reads the rows of one export file, and tells what a file
// is before it reads it. It owns:
//
//   - the formats (Format; FormatOf, a file's format by its name) and
//     RowReader, which reads a file's records one at a time through a
//     source per format: CSV (read_csv.go: RFC 4180 with real-world
//     tolerance — a BOM, CRLF or lone CR line ends, quoted line breaks, a
//     sep= line or a sniffed ";" or tab delimiter — and a report's footer
//     told from its records, footer.go), JSON and JSON Lines (read_json.go:
//     an array, an object holding one, or a record per line, streamed and
//     never loaded whole; SurveyJSON reads a file's outline before its
//     first record), and XLSX workbooks (read_xlsx.go, NewXLSXReader: read
//     in place over archive/zip and encoding/xml, a sheet streamed token by
//     token, values as Excel shows them, xlsx_values.go, a formula without
//     a value failing its row; the shared strings held once, in chunks,
//     xlsx_strings.go; each sheet with a header row in order, or a named
//     one; a row is named "contacts.xlsx!Sheet1:14", Where, and sized by
//     the cells it holds);
//   - the sniffing of what a file is (sniff.go): an archive, an image, a
//     workbook, binary data, JSON or an HTML page where CSV was expected,
//     UTF-16 or UTF-32 text; and of what a compound file named .xlsx is
//     (cfb.go): a password-protected workbook or an Excel 97–2003 one;
//   - the encodings (encoding.go): the evidence a file's bytes give of
//     theirs, counted over the whole file (EvidenceScanner, run in the pass
//     that fingerprints it), the choice made on its weight (ChooseEncoding,
//     SPEC §4: UTF-8 when its UTF-8 sequences are at least as many as its
//     bytes that are not, Windows-1252 only as a warning, --encoding over
//     both), and single-byte encodings read as the Encoding Standard reads
//     them (0x81 in Windows-1252 is U+0081), the bytes they leave
//     undefined counted in a warning;
//   - CountingReader, with which progress and the bomb guards count bytes.
//
// The rules it keeps (SPEC §4): bad input never panics and never stops
// the other records — a record that cannot be read comes back as a Row
// with its RowError (file, line, reason) and its text as it stands in the
// file, and fails alone (step 0; R4 keeps the raw row); a NUL byte is read
// as it is, the Row saying where (Row.NUL), for the profile to judge (a
// mapped field fails its row, a column kept in extra keeps it); a file
// that cannot be read is a FileError that names the file and what is
// wrong. Lines are the file's own, whatever its line ends. A record is
// bounded in size (MaxRecordBytes): one over the bound fails alone, read
// past without being held, its raw row the start of its text, and the
// records after it are read as usual; a quote never closed, or a value
// that never ends, over the bound fails the file instead of filling memory.
// It imports bytesize (a size in a message) and no other package of the
// project.
package reader
