package desktop

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

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
// page imports.
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
	dir := filepath.Join(base, time.Now().UTC().Format("20060102-150405")+"-"+suffix)
	if err := os.Mkdir(dir, 0o700); err != nil {
		s.fail(w, err)
		return
	}
	var names []string
	var written int64
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.fail(w, badRequest("uploads: %v", err))
			return
		}
		name := part.FileName()
		if name == "" {
			continue
		}
		clean := filepath.Base(filepath.Clean("/" + strings.ReplaceAll(name, `\`, "/")))
		if clean == "/" || clean == "." || strings.HasPrefix(clean, ".") {
			s.fail(w, badRequest("uploads: %q is no file name", name))
			return
		}
		f, err := os.OpenFile(filepath.Join(dir, clean), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			s.fail(w, badRequest("uploads: %s: %v", clean, err))
			return
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
			s.fail(w, badRequest("uploads: %s: %v", clean, err))
			return
		}
		names = append(names, clean)
	}
	if len(names) == 0 {
		s.fail(w, badRequest("uploads: no file in the request"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"path": dir, "files": names})
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
	if !store.IsAddress(s.cfg.DBPath) {
		return s.cfg.DBPath + "." + name, nil
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
