package desktop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"crmimport/runs"
	"crmimport/store"
)

// fileEntry is one entry of a folder the New import page browses.
type fileEntry struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
	Size int64  `json:"size"`
}

// apiFiles lists a folder of this machine for the folder browser: names,
// sizes and which are folders, never a file's content.
func (s *Server) apiFiles(w http.ResponseWriter, r *http.Request) {
	dir := r.URL.Query().Get("path")
	if dir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			dir = home
		} else {
			dir = "."
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		s.fail(w, badRequest("%s: %v", dir, err))
		return
	}
	st, err := os.Stat(abs)
	if err != nil {
		s.fail(w, badRequest("%s: no such folder", abs))
		return
	}
	if !st.IsDir() {
		abs = filepath.Dir(abs)
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		s.fail(w, badRequest("%s: %v", abs, err))
		return
	}
	out := []fileEntry{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // gone while listed
		}
		out = append(out, fileEntry{Name: e.Name(), Path: filepath.Join(abs, e.Name()), Dir: info.IsDir(), Size: info.Size()})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Dir != out[j].Dir {
			return out[i].Dir
		}
		return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name)
	})
	writeJSON(w, http.StatusOK, map[string]any{"path": abs, "parent": filepath.Dir(abs), "entries": out})
}

// maxUpload bounds what one drop may write.
const maxUpload = 8 << 30

// apiUpload saves the files dropped onto the New import page in a folder
// of their own in the uploads' private folder (beside the database, or
// for a server's in Config.Folder: privateFolder) — the folder 0700, each
// file 0600 (they hold customer data) — and answers its path, which the
// page imports. A drop that is refused or cut off (a name that is none,
// too much, a connection closed mid-file) keeps nothing: its folder goes
// with what was written in it.
func (s *Server) apiUpload(w http.ResponseWriter, r *http.Request) {
	mr, err := r.MultipartReader()
	if err != nil {
		s.fail(w, badRequest("uploads: send the files as multipart/form-data: %v", err))
		return
	}
	base, err := s.privateFolder(uploadsFolder)
	if err != nil {
		s.fail(w, err)
		return
	}
	suffix, err := newSecret(4)
	if err != nil {
		s.fail(w, err)
		return
	}
	// Named by the instant it was saved (to the microsecond, so that the
	// names of two drops of one second sort as they came: GET /api/uploads
	// lists them newest first by name) and a random suffix.
	dir := filepath.Join(base, time.Now().UTC().Format("20060102-150405.000000")+"-"+suffix)
	if err := os.Mkdir(dir, 0o700); err != nil {
		s.fail(w, err)
		return
	}
	names, err := saveDrop(mr, dir)
	if err == nil && len(names) == 0 {
		err = errors.New("no file in the request")
	}
	if err != nil {
		if rerr := os.RemoveAll(dir); rerr != nil {
			s.fail(w, fmt.Errorf("uploads: %v; what this drop wrote could not be removed (remove %s by hand, or delete it from New import): %w", err, dir, rerr))
			return
		}
		s.fail(w, badRequest("uploads: %v; nothing of this drop was kept: drop the files again", err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": dir, "files": names})
}

// saveDrop writes the files of a drop into dir, at most maxUpload bytes in
// all, and returns their names; its error names the file it stopped at.
func saveDrop(mr *multipart.Reader, dir string) ([]string, error) {
	var names []string
	var written int64
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return names, nil
		}
		if err != nil {
			return nil, err
		}
		name := part.FileName()
		if name == "" {
			continue
		}
		clean := filepath.Base(filepath.Clean("/" + strings.ReplaceAll(name, `\`, "/")))
		if clean == "/" || clean == "." || strings.HasPrefix(clean, ".") {
			return nil, fmt.Errorf("%q is no file name", name)
		}
		f, err := os.OpenFile(filepath.Join(dir, clean), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", clean, err)
		}
		n, err := io.Copy(f, io.LimitReader(part, maxUpload-written+1))
		written += n
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil && written > maxUpload {
			err = fmt.Errorf("more than %d GiB in one drop", maxUpload>>30)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", clean, err)
		}
		names = append(names, clean)
	}
}

// keptUpload is one drop kept in the uploads folder, as GET /api/uploads lists
// it: its files, and the runs that read them (a run that is running, or
// that resume would continue, needs them: R10).
type keptUpload struct {
	Name    string      `json:"name"`
	Path    string      `json:"path"`
	SavedAt string      `json:"saved_at"`
	Size    int64       `json:"size"`
	Files   []fileEntry `json:"files"`
	Runs    []uploadRun `json:"runs"`
}

// uploadRun is a run that reads a drop's files.
type uploadRun struct {
	Run         int64  `json:"run"`
	Status      string `json:"status"`
	Interrupted bool   `json:"interrupted"`
}

// apiUploads lists the drops kept in the uploads folder, newest first.
func (s *Server) apiUploads(w http.ResponseWriter, r *http.Request) {
	base, list, err := s.uploads(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"folder": base, "uploads": list})
}

// uploads reads the uploads folder: every drop in it (a folder apiUpload
// made), with its files and the runs that read them.
func (s *Server) uploads(ctx context.Context) (string, []keptUpload, error) {
	base, err := s.folderOf(uploadsFolder)
	if err != nil {
		return "", nil, err
	}
	entries, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return base, []keptUpload{}, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("uploads: %w", err)
	}
	readers, err := s.inputReaders(ctx)
	if err != nil {
		return "", nil, err
	}
	list := []keptUpload{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		u := keptUpload{Name: e.Name(), Path: filepath.Join(base, e.Name()), Files: []fileEntry{}, Runs: []uploadRun{}}
		if info, err := e.Info(); err == nil {
			u.SavedAt = info.ModTime().UTC().Format(time.RFC3339)
		}
		files, err := os.ReadDir(u.Path)
		if err != nil {
			continue // gone while listed
		}
		for _, f := range files {
			info, err := f.Info()
			if err != nil || f.IsDir() {
				continue
			}
			u.Files = append(u.Files, fileEntry{Name: f.Name(), Path: filepath.Join(u.Path, f.Name()), Size: info.Size()})
			u.Size += info.Size()
		}
		for _, rr := range readers {
			if within(rr.file, u.Path) && (len(u.Runs) == 0 || u.Runs[len(u.Runs)-1].Run != rr.run.Run) {
				u.Runs = append(u.Runs, rr.run)
			}
		}
		list = append(list, u)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name > list[j].Name }) // named by the time they were saved
	return base, list, nil
}

// inputReader is a file that a task of a run reads.
type inputReader struct {
	run  uploadRun
	file string
}

// inputReaders lists the input files of every run's tasks, run by run.
func (s *Server) inputReaders(ctx context.Context) ([]inputReader, error) {
	all, err := runs.ListRuns(ctx, s.ro, "")
	if err != nil {
		return nil, err
	}
	var out []inputReader
	for _, run := range all {
		tasks, err := runs.LoadTasks(ctx, s.ro, run.ID)
		if err != nil {
			return nil, err
		}
		ur := uploadRun{Run: run.ID, Status: string(run.Status), Interrupted: s.eng.Interrupted(run)}
		for _, t := range tasks {
			if t.File != "" {
				out = append(out, inputReader{run: ur, file: t.File})
			}
		}
	}
	return out, nil
}

// within: file is dir or in it.
func within(file, dir string) bool {
	rel, err := filepath.Rel(dir, file)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// apiDeleteUpload deletes one drop kept in the uploads folder, by its
// name as GET /api/uploads lists it. A drop that a running run reads —
// live, or interrupted, which resume continues over the same files (R10)
// — is refused (409, the CLI's exit code 6 of a live run): stop it first.
// A finished run that read it keeps its row; resume of it then refuses,
// its files being gone.
func (s *Server) apiDeleteUpload(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	_, list, err := s.uploads(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	i := slices.IndexFunc(list, func(u keptUpload) bool { return u.Name == name })
	if i < 0 {
		s.refuse(w, r, http.StatusNotFound, fmt.Sprintf("uploads: no drop called %q (GET /api/uploads lists them)", name))
		return
	}
	u := list[i]
	for _, run := range u.Runs {
		if run.Status != string(runs.RunRunning) {
			continue
		}
		how := "works on them"
		if run.Interrupted {
			how = "was interrupted and `crmimport resume " + strconv.FormatInt(run.Run, 10) + "` reads them"
		}
		writeJSON(w, http.StatusConflict, apiError{Error: fmt.Sprintf("uploads: run %d %s: stop it first (`crmimport stop %d`, or Stop on its page), then delete %s",
			run.Run, how, run.Run, u.Name), ExitCode: 6, LiveRun: run.Run})
		return
	}
	if err := os.RemoveAll(u.Path); err != nil {
		s.fail(w, fmt.Errorf("uploads: delete %s: %w", u.Path, err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": u.Name, "path": u.Path, "files": len(u.Files), "size": u.Size})
}

// uploadsFolder is the private folder of the files dropped onto the
// pages (privateFolder).
const uploadsFolder = "uploads"

// privateFolder is the folder where the pages write what they are given,
// one per kind of thing (name: uploads, fixes, profiles), made when
// absent (folderOf says where): 0700, and 0700 again if it was made
// otherwise; the files in it are 0600 — they hold customer data.
func (s *Server) privateFolder(name string) (string, error) {
	base, err := s.folderOf(name)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	if err := os.Chmod(base, 0o700); err != nil {
		return "", err
	}
	return base, nil
}

// folderOf is where privateFolder keeps the things called name: beside a
// SQLite file, named after it (crm.db.uploads for crm.db); for a server's
// database (PostgreSQL), which no file is beside, in Config.Folder, by
// default the user's configuration folder's crmimport/
// (~/.config/crmimport/uploads on Linux).
func (s *Server) folderOf(name string) (string, error) {
	switch d := store.DialectAt(s.cfg.DBPath); d {
	case store.SQLite:
		return s.cfg.DBPath + "." + name, nil
	case store.Postgres:
	default:
		panic(d.Untaught("desktop.Server.folderOf"))
	}
	dir := s.cfg.Folder
	if dir == "" {
		conf, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("the %s of a database on a server go in the user's configuration folder: %w", name, err)
		}
		dir = filepath.Join(conf, "crmimport")
	}
	return filepath.Join(dir, name), nil
}

// folderWords is folderOf(name) for a page to show.
func (s *Server) folderWords(name string) string {
	dir, err := s.folderOf(name)
	if err != nil {
		return err.Error()
	}
	return dir
}
