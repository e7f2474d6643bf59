// Package input owns the containers of an export and the inspection of
// its files:
//
//   - refs (ref.go): an input is a file on disk, a gzip file (NAME.gz,
//     read through gzip) or an entry of a zip read in place, never
//     extracted (ZIP!/ENTRY); Name says how messages name it, Size what
//     progress measures it against;
//   - opening an input (Open) within Limits, the bomb guards of an entry,
//     a zip and a ratio (container.go: checked against a zip's directory
//     before anything is uncompressed, and as a gzip uncompresses), and a
//     folder whose files are read one by one (folder.go, OpenFolder);
//   - listing an export (listing.go, List): folders, zips, gzips and
//     single files; an export zipped with its folder is read from inside
//     it; an archive inside an archive, or a zip holding two entries of one
//     name, is refused; folders that the profile reads no files from are
//     left out, and said so;
//   - regular files only (regular.go): a named pipe, a device or a socket
//     is refused before it is opened, and a stop ends a long read;
//   - inspecting a file in one streaming pass (inspect.go: Inspect,
//     InspectRef): its size, its fingerprint, its first bytes and the
//     evidence of its encoding (gathered with reader's scanner); and the
//     fingerprints resume checks (Fingerprint, FolderFingerprint).
//
// The rules it keeps: R10, the fingerprints of a plan — a file's CRC-32C
// and size, a zip entry's CRC-32 and size as the zip's directory records
// them, so that resume checks an entry without reading it; SPEC §4, a zip
// is read in place, never extracted. A problem found before a run exists
// is an *Error (exit 1, no run row); every error names its input. It
// imports reader and bytesize and no other package of the project.
package input
