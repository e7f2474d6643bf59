package importer

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/runopts"
	"crmimport/phases"
)

// A rerun of an export that this ledger has already taken whole need not
// read it again. When an earlier task read an input with the same key (the
// same bytes, read the same way), succeeded with no record skipped or
// failed, and no final slot has been removed since it began (the ledger's
// epoch), each record of the input already has its final slot: reading it
// again would count every one unchanged (R2) and write nothing. The task
// counts them so in one batch, and says so in the run log. `run --reread`
// reads every file anyway.
//
// The task must be the only one of its kind in its run: the ids of a file
// not read are not known, and another file of the kind could repeat them
// (a duplicate, SPEC §4 step 2).

// inputKeyVersion changes whenever the reading or the mapping of files
// changes which records (kind, source id) a file yields, so that tasks
// planned by an older crmimport vouch for nothing.
const inputKeyVersion = 1

// inputKey is what decides the records a task reads from f (phases.Task's
// InputKey): the file's name and fingerprint, its format and encoding, the
// encoding asked for, the profile's text, and the files read beside it.
func inputKey(p *profile.Profile, f inputFile, opts runopts.Options) string {
	h := sha256.New()
	line := func(name, value string) { fmt.Fprintf(h, "%s %d %s\n", name, len(value), value) }
	line("crmimport input key", strconv.Itoa(inputKeyVersion))
	line("file", input.BaseName(f.Path))
	line("fingerprint", f.Info.Fingerprint)
	line("format", string(f.Format))
	line("encoding", f.Encoding)
	line("asked encoding", opts.Encoding)
	line("profile", p.Name)
	line("profile text", string(p.Text()))
	beside := make([]string, 0, len(opts.SideFiles))
	for _, a := range opts.SideFiles {
		beside = append(beside, a.Role+" "+input.BaseName(a.File)+" "+a.Format+" "+a.Encoding+" "+a.Fingerprint)
	}
	sort.Strings(beside)
	for _, a := range beside {
		line("beside", a)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// openSameInput returns the work of a task whose input an earlier task
// vouches for (see above), or nil to read it. It is tried only for a task
// at its first record.
func (imp *Importer) openSameInput(ctx context.Context, run phases.Run, t phases.Task, tasks []phases.Task, opts runopts.Options) (*phases.Work, error) {
	if opts.Reread || t.InputKey == "" || t.Checkpoint.Rows != 0 {
		return nil, nil
	}
	for _, u := range tasks {
		if u.Kind == t.Kind && u.ID != t.ID {
			return nil, nil
		}
	}
	if _, found, err := phases.FindSameInput(ctx, imp.Engine.DB, run, t); err != nil || !found {
		return nil, err
	}
	size := fingerprintSize(t.Fingerprint) // what input.Size measures, without opening a zip again
	next := func(ctx context.Context, tx *sql.Tx) (phases.Batch, error) {
		// Again inside the batch, which holds the write lock: the epoch
		// cannot move between this look and the commit.
		same, found, err := phases.FindSameInput(ctx, tx, run, t)
		if err != nil {
			return phases.Batch{}, err
		}
		if !found {
			return phases.Batch{}, fmt.Errorf("%s: the ledger changed while the task began (a final slot was removed): run it again and it will be read",
				input.Name(t.File))
		}
		msg := fmt.Sprintf("task %d: %s holds the same %d %s as task %d of run %d read, each still in its final slot: counted unchanged without reading it again (R2; run --reread reads it)",
			t.ID, input.Name(t.File), same.Records, t.Kind.Plural(), same.Task, same.Run)
		if err := imp.Engine.Log(ctx, tx, run.ID, "info", msg); err != nil {
			return phases.Batch{}, err
		}
		return phases.Batch{
			Checkpoint: same.Checkpoint, // done: the engine stores it as read to its end (100%)
			Counts:     phases.Counts{Unchanged: same.Records, Excluded: same.Excluded, Untaken: same.Untaken},
			Done:       true,
			Committed: func() {
				if imp.Progress != nil {
					imp.Progress(t, size, size)
				}
			},
		}, nil
	}
	return &phases.Work{Size: size, Next: next, Close: func() error { return nil }}, nil
}

// fingerprintSize is the size a fingerprint ("crc32c:%08x:%d") records.
func fingerprintSize(fp string) int64 {
	n, err := strconv.ParseInt(fp[strings.LastIndexByte(fp, ':')+1:], 10, 64)
	if err != nil {
		return 0
	}
	return n
}
