package importer

import (
	"bufio"
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

// auxData is what a task reads from its export beside its own file, once,
// when it opens: the parents' names for links by name, the rows of joined
// files, the folders of body files. It is read-only afterwards (the feed
// goroutine maps rows with it).
type auxData struct {
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
	rows map[string][]linkValue
}

// bodySource is a folder of body files.
type bodySource struct {
	folder string // lower-cased, as the profile's body_file names it
	files  *input.FolderReader
}

// maxBodyBytes bounds one body file.
const maxBodyBytes = 64 << 20

func (a *auxData) close() {
	if a == nil {
		return
	}
	for _, b := range a.bodies {
		b.files.Close()
	}
}

// loadAux reads what the mapper m needs beside its file, from the run's
// auxiliary inputs.
func (imp *Importer) loadAux(ctx context.Context, p *Profile, m *mapper, aux []AuxInput) (*auxData, error) {
	a := &auxData{names: map[*linkSpec]*nameIndex{}, joins: map[*joinSpec]*joinIndex{}}
	for _, ls := range m.ks.links {
		if !ls.byName {
			continue
		}
		idx := &nameIndex{refs: map[string][]nameRef{}}
		for _, in := range aux {
			if in.Role != "names:"+string(ls.kind) {
				continue
			}
			if err := imp.readNames(ctx, p, ls, in, idx); err != nil {
				a.close()
				return nil, err
			}
		}
		a.names[ls] = idx
	}
	for _, js := range m.fs.joins {
		idx := &joinIndex{rows: map[string][]linkValue{}}
		for _, in := range aux {
			if in.Role != "join:"+js.file {
				continue
			}
			if err := imp.readJoin(ctx, m, js, in, idx); err != nil {
				a.close()
				return nil, err
			}
		}
		a.joins[js] = idx
	}
	if m.fs.bodyFile != "" {
		folder := strings.ToLower(path.Dir(m.fs.bodyFile))
		for _, in := range aux {
			if in.Role != "bodies:"+folder {
				continue
			}
			files, err := input.OpenFolder(in.File)
			if err != nil {
				a.close()
				return nil, err
			}
			a.bodies = append(a.bodies, bodySource{folder: folder, files: files})
		}
	}
	return a, nil
}

// eachRow reads every row of an auxiliary input.
func (imp *Importer) eachRow(ctx context.Context, in AuxInput, f func(reader.Row) error) error {
	o, err := input.Open(in.File, imp.limits)
	if err != nil {
		return err
	}
	defer o.Close()
	rr, err := reader.NewRowReader(bufio.NewReaderSize(o, 1<<16), reader.ReadOptions{Name: input.Name(in.File), Format: reader.Format(in.Format), Encoding: in.Encoding})
	if err != nil {
		return err
	}
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
func (imp *Importer) readNames(ctx context.Context, p *Profile, ls *linkSpec, in AuxInput, idx *nameIndex) error {
	name := input.Name(in.File)
	pm := newMapper(p, ls.kind, name)
	var pick picker
	err := imp.eachRow(ctx, in, func(row reader.Row) error {
		r := pm.mapRow(row)
		if r.notRecord || r.ID == "" || r.Err != nil {
			return nil
		}
		if del, ok := canon.ParseBool(r.get("deleted")); ok && del {
			return nil
		}
		var n string
		if len(ls.nameColumns) > 0 {
			cols := row.Cols
			if pm.roots != nil {
				cols = flatten(cols, pm.roots)
			}
			for _, c := range ls.nameColumns {
				if n = pick.value(cols, normaliseHeader(c)); n != "" {
					break
				}
			}
		} else if ls.kind == ledger.Contact {
			n = strings.TrimSpace(strings.TrimSpace(r.get("first_name")) + " " + strings.TrimSpace(r.get("last_name")))
		} else {
			n = strings.TrimSpace(r.get("name"))
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
func (imp *Importer) readJoin(ctx context.Context, m *mapper, js *joinSpec, in AuxInput, idx *joinIndex) error {
	name := input.Name(in.File)
	preferred := map[string]int{} // key -> how many preferred values lead its list
	var p picker
	keyCol, deletedCol, preferCol := normaliseHeader(js.key), normaliseHeader(js.deleted), normaliseHeader(js.prefer)
	err := imp.eachRow(ctx, in, func(row reader.Row) error {
		if row.Err != nil {
			return nil
		}
		key := m.normID(p.value(row.Cols, keyCol))
		if key == "" {
			return nil
		}
		if js.deleted != "" {
			if del, ok := canon.ParseBool(p.value(row.Cols, deletedCol)); ok && del {
				return nil
			}
		}
		var vals []linkValue
		for _, ls := range js.links {
			for _, c := range ls.columns {
				v := p.value(row.Cols, normaliseHeader(c))
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
			prefer, _ = canon.ParseBool(p.value(row.Cols, preferCol))
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
func (a *auxData) readBody(name string) (string, error) {
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
