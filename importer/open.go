package importer

import (
	"bufio"

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
// surveyed first, then the reader reads a CSV file's header. An error names
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
	in, err := input.Open(file, lim)
	if err != nil {
		return nil, err
	}
	rr, err := reader.NewRowReader(bufio.NewReaderSize(in, 1<<16), opt)
	if err != nil {
		in.Close()
		return nil, err
	}
	return &taskInput{in: in, rr: rr, mapper: profile.NewMapper(prof, k, name)}, nil
}

// ready refuses a header the profile cannot read safely (no id column, a
// field given twice: Mapper.CheckHeader), which fails the task, and lets
// the reader tell a footer from the records by their ids.
func (ti *taskInput) ready() error {
	if err := ti.mapper.CheckHeader(ti.rr.Header()); err != nil {
		return err
	}
	ti.rr.WatchFooter(func(row reader.Row) bool { return ti.mapper.Map(row).ID != "" })
	return nil
}

// close lets go of the input and of what the mapper read beside it.
func (ti *taskInput) close() error {
	ti.mapper.Close()
	return ti.in.Close()
}

// FileHeader reads the header of a CSV input (a file, a gzip, a zip's
// entry) as its task reads it, in its encoding: the columns as they stand
// in the file, in order (a fix file is written under them: package
// fixfile).
func FileHeader(file, encoding string) ([]string, error) {
	in, err := input.Open(file, input.DefaultLimits())
	if err != nil {
		return nil, err
	}
	defer in.Close()
	rr, err := reader.NewRowReader(bufio.NewReaderSize(in, 1<<16), reader.ReadOptions{Name: input.Name(file), Format: reader.FormatCSV, Encoding: encoding})
	if err != nil {
		return nil, err
	}
	return rr.Header(), nil
}
