package importer

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/importer/runopts"
	"crmimport/ledger"
)

// byIDsRows is how many rows of a file kindsByIDs reads for an id before
// it gives up on the file.
const byIDsRows = 50

// kindsByIDs tells the kind of each file of the export that none of p's
// patterns names, by the ids it holds, where p tells kinds so
// (kinds_by_id_prefix): a Salesforce Data Loader extract is one
// extract.csv per object, named as its user chose, with the API's names
// upper-cased as headers (ID, ACCOUNTID) — its ids say which object
// (001… accounts). It returns p reading each such file as its kind, the
// files and their kinds (runopts.Options.ByIDs, which the run's profile
// reads again), and a notice per file. A file it cannot read, or whose
// ids say no kind, is left as it was: planning says why it is not read.
func kindsByIDs(p *profile.Profile, paths []string, lim input.Limits) (*profile.Profile, map[string]string, []string) {
	if !p.ReadsKindsByIDs() {
		return p, nil, nil
	}
	ls, err := input.List(paths, input.Want{}, lim)
	if err != nil {
		return p, nil, nil // discover reports it
	}
	byIDs := map[string]string{}
	var notices []string
	for _, f := range ls.Files {
		if _, _, ok := p.FileKinds(f.Name); ok {
			continue
		}
		format, ok := reader.FormatOf(f.Name)
		if !ok {
			continue
		}
		k, prefix, ok := kindOfFile(p, f, format, lim)
		if !ok {
			continue
		}
		if prev, seen := byIDs[f.Name]; seen && prev != string(k) {
			delete(byIDs, f.Name) // two files of one name, two objects: neither is guessed
			continue
		}
		byIDs[f.Name] = string(k)
		notices = append(notices, fmt.Sprintf("%s: read as %s: no file name of the %s profile names it, and its ids start %s (%s ids)",
			input.Name(f.Ref), k.Plural(), p.Name, prefix, k))
	}
	sort.Strings(notices)
	return runopts.WithFileKinds(p, byIDs), byIDs, notices
}

// kindOfFile reads the first rows of f for the id of a record: the
// column that names an id of one of p's kinds, and the kind its value's
// prefix says.
func kindOfFile(p *profile.Profile, f input.File, format reader.Format, lim input.Limits) (ledger.Kind, string, bool) {
	rr, in, err := input.OpenRows(f.Ref, reader.ReadOptions{Name: f.Name, Format: format}, lim)
	if err != nil {
		return "", "", false
	}
	defer in.Close()
	var idCols []string
	for _, k := range p.Kinds() {
		idCols = append(idCols, p.IDColumns(k)...)
	}
	at := -1
	for i, h := range rr.Header() {
		if slices.Contains(idCols, profile.NormaliseHeader(h)) {
			at = i
			break
		}
	}
	if at < 0 {
		return "", "", false
	}
	for range byIDsRows {
		row, err := rr.Next()
		if errors.Is(err, io.EOF) || err != nil {
			return "", "", false
		}
		if row.Err != nil || at >= len(row.Cols) {
			continue
		}
		if id := p.NormaliseID(row.Cols[at].Value); id != "" {
			return p.KindOfIDs(id)
		}
	}
	return "", "", false
}
