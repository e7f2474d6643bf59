package input

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"crmimport/bytesize"
	"crmimport/importer/reader"
)

// A workbook (.xlsx) is a zip, read in place: its directory is at its end,
// so its reader needs random access (io.ReaderAt), not a stream. A file on
// disk is read where it lies, and so is a workbook stored uncompressed in
// an export's zip (a section of the zip's file). A workbook that was
// deflated into the export's zip, or gzipped, has no bytes on disk to read
// in place; since nothing is extracted to disk (SPEC §4), it is
// uncompressed into memory, up to maxWorkbookInMemory, and refused beyond,
// saying how to pass it instead.

// maxWorkbookInMemory bounds a compressed workbook held in memory: with its
// shared strings (reader's bound) it stays within the memory goal of a run.
var maxWorkbookInMemory int64 = 64 << 20

// OpenAt opens a workbook input for reading in place: a file, a zip's
// entry, or a .gz (see above). The returned Opened has At set and no
// Reader; Size is the workbook's size. Errors name the input.
func OpenAt(ref string, lim Limits) (*Opened, error) {
	if in, ok, err := OpenInPlace(ref, lim); ok || err != nil {
		return in, err
	}
	// Deflated in a zip, or gzipped: uncompressed into memory, bounded.
	r, name := parseRef(ref), Name(ref)
	in, err := Open(ref, lim)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if in.Size > maxWorkbookInMemory && r.entry != "" { // the entry's size, from the zip's directory
		return nil, workbookTooBig(name, true)
	}
	b, err := io.ReadAll(io.LimitReader(in, maxWorkbookInMemory+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > maxWorkbookInMemory {
		return nil, workbookTooBig(name, r.entry != "")
	}
	return &Opened{At: bytes.NewReader(b), Size: int64(len(b))}, nil
}

// OpenInPlace opens an input for reading at any offset, where its bytes
// lie as they are read: a file, or a zip's entry stored uncompressed (a
// section of the zip's file). ok=false, and nothing open, for a .gz or a
// deflated entry, which can only be read forward (Open). The returned
// Opened has At set and no Reader. Errors name the input.
func OpenInPlace(ref string, lim Limits) (_ *Opened, ok bool, err error) {
	r := parseRef(ref)
	switch {
	case r.entry != "":
		return openStoredEntry(r.path, ref, Name(ref), lim)
	case isGzipName(r.path):
		return nil, false, nil
	}
	f, size, err := openSized(r.path, Name(ref))
	if err != nil {
		return nil, false, err
	}
	return &Opened{At: f, Size: size, closers: []io.Closer{f}}, true, nil
}

// openStoredEntry opens a zip's entry stored uncompressed as a section of
// the zip's file; ok=false (and no error) for a deflated entry.
func openStoredEntry(zipPath, ref, name string, lim Limits) (*Opened, bool, error) {
	zr, err := openZip(zipPath)
	if err != nil {
		return nil, false, fmt.Errorf("%s: cannot open the zip: %w", filepath.Base(zipPath), unwrapPath(err))
	}
	defer zr.Close()
	if err := checkZip(filepath.Base(zipPath), &zr.Reader, lim); err != nil {
		return nil, false, err
	}
	e, err := findEntry(&zr.Reader, ref)
	if err != nil {
		return nil, false, err
	}
	if e.Method != zip.Store || e.Flags&0x1 != 0 {
		return nil, false, nil // deflated (or encrypted: Open says so)
	}
	off, err := e.DataOffset()
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", name, err)
	}
	f, err := os.Open(zipPath)
	if err != nil {
		return nil, false, fmt.Errorf("%s: cannot open the zip: %w", filepath.Base(zipPath), unwrapPath(err))
	}
	size := int64(e.UncompressedSize64)
	return &Opened{At: io.NewSectionReader(f, off, size), Size: size, closers: []io.Closer{f}}, true, nil
}

func workbookTooBig(name string, inZip bool) error {
	how := "gunzip it and pass the .xlsx file"
	if inZip {
		how = "extract the zip and pass the folder, or zip the workbook again stored (zip -0)"
	}
	return fmt.Errorf("%s: a workbook compressed in another archive is read in memory, and this one is over %s: %s",
		name, bytesize.Format(maxWorkbookInMemory), how)
}

// ZipGuard bounds a workbook (an xlsx is a zip) as an export's zip is
// bounded: all its parts against the zip limit, each part against the
// entry limit and the ratio, checked against the workbook's directory
// before anything is uncompressed. The reader's errors name the workbook.
func (lim Limits) ZipGuard() reader.ZipGuard {
	return reader.ZipGuard{
		Zip:  func(zr *zip.Reader) error { return checkZip("the workbook", zr, lim) },
		Part: func(f *zip.File) error { return checkEntry("part "+f.Name, f, lim) },
	}
}

// CheckWorkbook refuses a workbook that would uncompress past the limits
// (a workbook bomb) before a run exists, as an export's zip is refused
// (checkZip, checkEntry, against its directory, nothing uncompressed):
// planning calls it for each workbook it plans. The reader's own guard
// (ZipGuard) would refuse it only once the task reads it, failing a run
// that should never have been made (issue 23 item 20). A file that is
// not a zip is left to the reader, whose task fails saying what it is.
func CheckWorkbook(ref string, lim Limits) error {
	in, err := OpenAt(ref, lim)
	if err != nil {
		return err
	}
	defer in.Close()
	zr, err := zip.NewReader(in.At, in.Size)
	if err != nil {
		return nil
	}
	name := Name(ref)
	if err := checkZip(name, zr, lim); err != nil {
		return err
	}
	for _, f := range zr.File {
		if err := checkEntry(name+": part "+f.Name, f, lim); err != nil {
			return err
		}
	}
	return nil
}

// OpenRows opens an input and starts reading its rows in its format: a
// workbook in place (OpenAt), bounded as a zip (ZipGuard), the sheet
// opt.Sheet names or each with a header row; any other file as a stream
// (Open). The caller closes the Opened once done with the rows.
func OpenRows(ref string, opt reader.ReadOptions, lim Limits) (*reader.RowReader, *Opened, error) {
	if opt.Format == reader.FormatXLSX {
		in, err := OpenAt(ref, lim)
		if err != nil {
			return nil, nil, err
		}
		opt.Encoding, opt.Guard = "", lim.ZipGuard() // a workbook's XML names its encoding
		rr, err := reader.NewXLSXReader(in.At, in.Size, opt)
		if err != nil {
			in.Close()
			return nil, nil, err
		}
		return rr, in, nil
	}
	in, err := Open(ref, lim)
	if err != nil {
		return nil, nil, err
	}
	rr, err := reader.NewRowReader(bufio.NewReaderSize(in, 1<<16), opt)
	if err != nil {
		in.Close()
		return nil, nil, err
	}
	return rr, in, nil
}
