package importer

import (
	"bufio"
	"fmt"
	"strings"

	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// taskInput is a task's file open for reading, as a task opens it and as
// Inspect looks at it before any run exists: the input, its row reader
// (a CSV file's header read) and the mapper of its kind.
type taskInput struct {
	in     *input.Opened
	rr     *reader.RowReader
	mapper *profile.Mapper
}

// openTaskInput opens a file of kind k (a file, a gzip, a zip's entry) in
// its format and encoding, within the limits: a JSON file's outline is
// surveyed first, then the reader reads a CSV file's header, or a
// workbook's outline and its first sheet's header (the sheet the profile
// names, or each with a header row). An error names
// the file and what is wrong with it (not CSV, an archive, a broken
// header): it fails the task. The header is not judged yet (ready).
func openTaskInput(prof *profile.Profile, file string, k ledger.Kind, format reader.Format, encoding string, lim input.Limits) (*taskInput, error) {
	name := input.Name(file)
	opt := reader.ReadOptions{Name: name, Format: format, Encoding: encoding}
	if opt.Format == reader.FormatJSON {
		// A JSON object holding two arrays of records fails before its
		// first record is imported (SPEC §4): see reader.SurveyJSON.
		in, err := input.Open(file, lim)
		if err != nil {
			return nil, err
		}
		err = reader.SurveyJSON(bufio.NewReaderSize(in, 1<<16), opt)
		in.Close()
		if err != nil {
			return nil, err
		}
	}
	opt.Sheet = prof.Sheet(k, file)
	rr, in, err := input.OpenRows(file, opt, lim)
	if err != nil {
		return nil, err
	}
	return &taskInput{in: in, rr: rr, mapper: profile.NewMapper(prof, k, name)}, nil
}

// ready refuses a header the profile cannot read safely (no id column, a
// field given twice: Mapper.CheckHeader), which fails the task, and lets
// the reader tell a footer from the records by their ids.
func (ti *taskInput) ready() error {
	if ti.rr.Sheet() != "" {
		// Each sheet of a workbook has a header of its own, judged as the
		// reader reaches it; a sheet with no column of the kind is left
		// unread, and said so (sheetNotices).
		if err := ti.rr.CheckHeaders(ti.checkSheet); err != nil {
			return err
		}
		if ti.rr.Sheet() == "" {
			return &reader.FileError{File: ti.mapper.File(), Reason: "no sheet holds " + ti.mapper.Kind().Plural() +
				" the profile reads: " + ti.sheetsSkipped() + "; name the sheet to read in the profile (files: [{file: …, sheet: NAME}]) or export it again"}
		}
	} else if err := ti.mapper.CheckHeader(ti.rr.Header()); err != nil {
		return err
	}
	ti.rr.WatchFooter(func(row reader.Row) bool { return ti.mapper.Map(row).ID != "" })
	return nil
}

// checkSheet judges a workbook sheet's header: a sheet of no column the
// profile reads for the kind is skipped; else as a CSV header.
func (ti *taskInput) checkSheet(header []string) error {
	if !ti.mapper.Recognises(header) {
		return reader.ErrSkipSheet
	}
	return ti.mapper.CheckHeader(header)
}

// sheetsSkipped lists the sheets of a workbook left unread, with their
// headers.
func (ti *taskInput) sheetsSkipped() string {
	var out []string
	for _, s := range ti.rr.SkippedSheets() {
		out = append(out, fmt.Sprintf("sheet %q (header at row %d: %s)", s.Name, s.Line, profile.Preview(s.Header)))
	}
	return strings.Join(out, ", ")
}

// sheetNotices are what a task says, once it has read its workbook, of
// the sheets it left unread.
func sheetNotices(file string, rr *reader.RowReader, prof *profile.Profile, k ledger.Kind) []string {
	var out []string
	for _, s := range rr.SkippedSheets() {
		out = append(out, fmt.Sprintf("%s!%s: not read: none of its columns (%s, header at row %d) is one the %s profile reads for %s",
			file, s.Name, profile.Preview(s.Header), s.Line, prof.Name, k.Plural()))
	}
	return out
}

// close lets go of the input and of what the mapper read beside it.
func (ti *taskInput) close() error {
	ti.mapper.Close()
	return ti.in.Close()
}

// FileHeader reads the header of a CSV input (a file, a gzip, a zip's
// entry; or a workbook's first sheet) as its task reads it, in its encoding: the columns as they stand
// in the file, in order (a fix file is written under them: package
// fixfile).
func FileHeader(file, encoding string) ([]string, error) {
	format := reader.FormatCSV
	if f, _ := reader.FormatOf(input.Name(file)); f == reader.FormatXLSX {
		format = f // a workbook's: the header of its first sheet that has one
	}
	rr, in, err := input.OpenRows(file, reader.ReadOptions{Name: input.Name(file), Format: format, Encoding: encoding}, input.DefaultLimits())
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return rr.Header(), nil
}
