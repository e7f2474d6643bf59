package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode/utf8"

	"crmimport/canon"
	"crmimport/importer/input"
	"crmimport/importer/reader"
	"crmimport/ledger"
)

// SideFile is a file that tasks read beside their own: a file joined to
// each record (Salesforce OpportunityContactRole.csv), the parent files
// that links by name look names up in, a folder of body files. It is
// fingerprinted with the plan (R10), kept in the run's options, and
// checked again on resume.
type SideFile struct {
	Role        string `json:"role"` // join:PATTERN, names:KIND or bodies:FOLDER
	File        string `json:"file"`
	Format      string `json:"format,omitempty"`
	Encoding    string `json:"encoding,omitempty"`
	Fingerprint string `json:"fingerprint"`
}

// FindSideFiles finds in an export what the tasks of the planned kinds
// read beside their own files: for each kind planned (planned: the refs of
// its files), the files joined to its records (among others, the files of
// no kind), the folders of its body files (among folders), and the files
// of the parent kinds it looks names up in (byKind: every file of a kind,
// planned or not). It returns the side files in the order found, which of
// others it reads, and a notice for each join that finds no file.
func (p *Profile) FindSideFiles(planned map[ledger.Kind][]string, byKind map[ledger.Kind][]input.File, others []input.File,
	folders []input.Folder) (side []SideFile, used map[string]bool, notices []string) {
	found := map[string]bool{} // role and ref of each side file found
	used = map[string]bool{}
	for _, k := range p.Kinds() {
		if len(planned[k]) == 0 {
			continue
		}
		spec := p.kinds[k]
		for _, fsp := range spec.files {
			for _, js := range fsp.joins {
				matched := false
				for _, o := range others {
					if matchFile(js.file, matchName(o.Name)) {
						matched = true
						used[o.Ref] = true
						if role := joinRole(js); !found[role+"\x00"+o.Ref] {
							found[role+"\x00"+o.Ref] = true
							format, _ := reader.FormatOf(matchName(o.Ref))
							side = append(side, SideFile{Role: role, File: o.Ref, Format: string(format)})
						}
					}
				}
				if !matched && matchesAny(fsp, planned[k]) {
					notices = append(notices, fmt.Sprintf("no file of the export matches %s, which the %s profile joins to %s: "+
						"their links come from their own columns only", js.file, p.Name, fsp.pattern))
				}
			}
			if fsp.bodyFile != "" {
				dir := strings.ToLower(path.Dir(fsp.bodyFile))
				for _, bf := range folders {
					if role := bodiesRole(dir); bf.Name == dir && !found[role+"\x00"+bf.Ref] {
						found[role+"\x00"+bf.Ref] = true
						side = append(side, SideFile{Role: role, File: bf.Ref, Format: "folder"})
					}
				}
			}
		}
		for _, l := range spec.links {
			if !l.byName {
				continue
			}
			role := namesRole(l.kind)
			for _, f := range byKind[l.kind] {
				if !found[role+"\x00"+f.Ref] {
					found[role+"\x00"+f.Ref] = true
					format, _ := reader.FormatOf(matchName(f.Name))
					side = append(side, SideFile{Role: role, File: f.Ref, Format: string(format)})
				}
			}
		}
	}
	return side, used, notices
}

// The roles of side files: what a task reads each for.
func joinRole(js *joinSpec) string    { return "join:" + js.file }
func namesRole(k ledger.Kind) string  { return "names:" + string(k) }
func bodiesRole(folder string) string { return "bodies:" + folder }

// RoleWords says what a side file of role is to the task that reads it,
// and the name (lower-cased, a pattern for a joined file) that a file or a
// folder must have for FindSideFiles to find it in that role; "" for a
// parents' file, found by its kind rather than its name.
func (p *Profile) RoleWords(role string) (what, name string) {
	how, arg, _ := strings.Cut(role, ":")
	switch how {
	case "join":
		return "the file the " + p.Name + " profile joins to it", arg
	case "bodies":
		return "the folder of body files the " + p.Name + " profile reads beside it", arg
	case "names":
		return "a file of the " + ledger.Kind(arg).Plural() + " its links by name look names up in", ""
	}
	return role, ""
}

// SideFilesRead are those of files (a run's side files) that a task of the
// mapper's file reads (ReadSideFiles): the parents' files its links by
// name look names up in, the files joined to it, its body folders.
func (m *Mapper) SideFilesRead(files []SideFile) []SideFile {
	roles := map[string]bool{}
	for _, ls := range m.kindSpec.links {
		if ls.byName {
			roles[namesRole(ls.kind)] = true
		}
	}
	for _, js := range m.fileSpec.joins {
		roles[joinRole(js)] = true
	}
	if m.fileSpec.bodyFile != "" {
		roles[bodiesRole(strings.ToLower(path.Dir(m.fileSpec.bodyFile)))] = true
	}
	var out []SideFile
	for _, f := range files {
		if roles[f.Role] {
			out = append(out, f)
		}
	}
	return out
}

// matchesAny reports whether one of refs matches fsp's pattern.
func matchesAny(fsp *fileSpec, refs []string) bool {
	for _, ref := range refs {
		if matchFile(fsp.pattern, matchName(ref)) {
			return true
		}
	}
	return false
}

// sideFiles is what a task reads from its export beside its own file,
// once, when it opens: the parents' names for links by name, the rows of
// joined files, the folders of body files. It is read-only afterwards (the
// feed goroutine maps rows with it).
type sideFiles struct {
	names  map[*linkSpec]*nameIndex
	joins  map[*joinSpec]*joinIndex
	bodies []bodySource
}

// nameIndex maps a parent's exact name to the records of that name.
type nameIndex struct {
	refs map[string][]nameRef
}

type nameRef struct {
	id   string
	file string
	line int
}

// joinIndex maps a key (this record's id, or another column) to the link
// values of the joined rows that hold it, preferred rows first.
type joinIndex struct {
	rows map[string][]LinkValue
}

// bodySource is a folder of body files.
type bodySource struct {
	folder string // lower-cased, as the profile's body_file names it
	files  *input.FolderReader
}

// maxBodyBytes bounds one body file.
const maxBodyBytes = 64 << 20

func (a *sideFiles) close() {
	if a == nil {
		return
	}
	for _, b := range a.bodies {
		b.files.Close()
	}
}

// ReadSideFiles reads what the mapper needs beside its file from the run's
// side files (names, joined rows; body folders are opened, their files
// read as records ask for them), within the limits. Close lets go of them.
func (m *Mapper) ReadSideFiles(ctx context.Context, files []SideFile, lim input.Limits) error {
	a := &sideFiles{names: map[*linkSpec]*nameIndex{}, joins: map[*joinSpec]*joinIndex{}}
	for _, ls := range m.kindSpec.links {
		if !ls.byName {
			continue
		}
		idx := &nameIndex{refs: map[string][]nameRef{}}
		for _, in := range files {
			if in.Role != namesRole(ls.kind) {
				continue
			}
			if err := readNames(ctx, m.p, ls, in, lim, idx); err != nil {
				a.close()
				return err
			}
		}
		a.names[ls] = idx
	}
	for _, js := range m.fileSpec.joins {
		idx := &joinIndex{rows: map[string][]LinkValue{}}
		for _, in := range files {
			if in.Role != joinRole(js) {
				continue
			}
			if err := readJoin(ctx, m, js, in, lim, idx); err != nil {
				a.close()
				return err
			}
		}
		a.joins[js] = idx
	}
	if m.fileSpec.bodyFile != "" {
		folder := strings.ToLower(path.Dir(m.fileSpec.bodyFile))
		for _, in := range files {
			if in.Role != bodiesRole(folder) {
				continue
			}
			bodies, err := input.OpenFolder(in.File)
			if err != nil {
				a.close()
				return err
			}
			a.bodies = append(a.bodies, bodySource{folder: folder, files: bodies})
		}
	}
	m.side = a
	return nil
}

// Close lets go of what ReadSideFiles opened.
func (m *Mapper) Close() { m.side.close() }

// eachRow reads every row of a side file.
func eachRow(ctx context.Context, in SideFile, lim input.Limits, f func(reader.Row) error) error {
	rr, o, err := input.OpenRows(in.File, reader.ReadOptions{Name: input.Name(in.File), Format: reader.Format(in.Format), Encoding: in.Encoding}, lim)
	if err != nil {
		return err
	}
	defer o.Close()
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		row, err := rr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := f(row); err != nil {
			return err
		}
	}
}

// readNames reads the names of a parent file into idx: its records, mapped
// by the profile, by their exact name. A record deleted in the source, or
// without id, names nothing.
func readNames(ctx context.Context, p *Profile, ls *linkSpec, in SideFile, lim input.Limits, idx *nameIndex) error {
	name := input.Name(in.File)
	pm := NewMapper(p, ls.kind, name)
	var columns picker
	err := eachRow(ctx, in, lim, func(row reader.Row) error {
		r := pm.Map(row)
		if r.Excluded || r.ID == "" || r.Err != nil {
			return nil
		}
		if del, ok := canon.ParseBool(r.Get("deleted")); ok && del {
			return nil
		}
		var n string
		if len(ls.nameColumns) > 0 {
			cols := row.Cols
			if pm.roots != nil {
				cols = flatten(cols, pm.roots)
			}
			for _, c := range ls.nameColumns {
				if n = columns.value(cols, normaliseHeader(c)); n != "" {
					break
				}
			}
		} else if ls.kind == ledger.Contact {
			n = strings.TrimSpace(strings.TrimSpace(r.Get("first_name")) + " " + strings.TrimSpace(r.Get("last_name")))
		} else {
			n = strings.TrimSpace(r.Get("name"))
		}
		if n == "" {
			return nil
		}
		for _, ref := range idx.refs[n] {
			if ref.id == r.ID {
				return nil // the same record twice (a duplicate row) is one name
			}
		}
		idx.refs[n] = append(idx.refs[n], nameRef{id: r.ID, file: r.File, line: r.Line})
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the names of %s in %s: %w", ls.kind.Plural(), name, err)
	}
	return nil
}

// readJoin reads a joined file into idx: per key, the link values of its
// rows, rows flagged by the join's prefer column first, deleted rows left
// out.
func readJoin(ctx context.Context, m *Mapper, js *joinSpec, in SideFile, lim input.Limits, idx *joinIndex) error {
	name := input.Name(in.File)
	preferred := map[string]int{} // key -> how many preferred values lead its list
	var columns picker
	keyCol, deletedCol, preferCol := normaliseHeader(js.key), normaliseHeader(js.deleted), normaliseHeader(js.prefer)
	err := eachRow(ctx, in, lim, func(row reader.Row) error {
		if row.Err != nil {
			return nil
		}
		key := m.normID(columns.value(row.Cols, keyCol))
		if key == "" {
			return nil
		}
		if js.deleted != "" {
			if del, ok := canon.ParseBool(columns.value(row.Cols, deletedCol)); ok && del {
				return nil
			}
		}
		var vals []LinkValue
		for _, ls := range js.links {
			for _, c := range ls.columns {
				v := columns.value(row.Cols, normaliseHeader(c))
				if v == "" {
					continue
				}
				vals = append(vals, m.linkValues(ls, reader.Col{Name: c, Value: v}, name+" "+c)...)
				break
			}
		}
		if len(vals) == 0 {
			return nil
		}
		prefer := false
		if js.prefer != "" {
			prefer, _ = canon.ParseBool(columns.value(row.Cols, preferCol))
		}
		list := idx.rows[key]
		if prefer {
			at := preferred[key]
			list = append(list[:at], append(vals, list[at:]...)...)
			preferred[key] = at + len(vals)
		} else {
			list = append(list, vals...)
		}
		idx.rows[key] = list
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the joined file %s: %w", name, err)
	}
	return nil
}

// readBody reads a body file ("ContentVersion/068…") from the export's
// body folders: at most maxBodyBytes of valid UTF-8, as it is.
func (a *sideFiles) readBody(name string) (string, error) {
	dir, file := path.Split(name)
	dir = strings.ToLower(strings.TrimSuffix(dir, "/"))
	if file == "" || strings.ContainsAny(file, `/\`) || file == "." || file == ".." {
		return "", fmt.Errorf("body file %q: not a file name", name)
	}
	if a == nil {
		return "", fmt.Errorf("body file %s: the export has no %s folder", name, dir)
	}
	for _, b := range a.bodies {
		if b.folder != dir {
			continue
		}
		rc, err := b.files.Open(file)
		switch {
		case err != nil && b.files.OnDisk():
			return "", fmt.Errorf("body file %s: %w", name, err)
		case err != nil:
			return "", err
		case rc == nil:
			continue
		}
		data, err := io.ReadAll(io.LimitReader(rc, maxBodyBytes+1))
		rc.Close()
		switch {
		case err != nil:
			return "", fmt.Errorf("body file %s: %w", name, err)
		case len(data) > maxBodyBytes:
			return "", fmt.Errorf("body file %s is larger than %d MiB", name, maxBodyBytes>>20)
		case !utf8.Valid(data):
			return "", fmt.Errorf("body file %s is not valid UTF-8", name)
		}
		return string(data), nil
	}
	if len(a.bodies) == 0 {
		return "", fmt.Errorf("body file %s: the export has no %s folder", name, dir)
	}
	return "", fmt.Errorf("body file %s is not in the export", name)
}
