package desktop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/fixtures/gen"
	"crmimport/store/storetest"
)

// drop is a multipart body of files (name → content), as the page sends a
// drop.
func drop(t *testing.T, files ...[2]string) (body *bytes.Buffer, contentType string) {
	t.Helper()
	body = &bytes.Buffer{}
	mw := multipart.NewWriter(body)
	for _, f := range files {
		w, err := mw.CreateFormFile("file", f[0])
		require.NoError(t, err)
		_, err = io.WriteString(w, f[1])
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	return body, mw.FormDataContentType()
}

// postDrop posts a drop to the server's handler.
func (s *Server) postDrop(t *testing.T, body io.Reader, contentType string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/api/uploads", body)
	r.Host = s.addr
	r.Header.Set("Content-Type", contentType)
	r.Header.Set(RequestedBy, "crmimport")
	r.AddCookie(&http.Cookie{Name: s.cookie, Value: s.token})
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return w
}

// drops lists the drops kept in the server's uploads folder.
func drops(t *testing.T, s *Server) []string {
	t.Helper()
	entries, err := os.ReadDir(private(s, uploadsFolder))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestARefusedDropLeavesNothing: issue 23 item 23 — a drop that is refused
// (a file name that is none) or cut off mid-upload (the connection closes
// in the middle of a file) keeps nothing of what it wrote: its folder in
// the uploads goes, files written before the refusal too.
func TestARefusedDropLeavesNothing(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := testServer(t, addr)
		go func() { _ = s.Serve() }() // ends with Shutdown
		body, ct := drop(t, [2]string{"contacts.csv", "id,first_name\nc1,Ann\n"}, [2]string{".hidden.csv", "x\n"})
		w := s.postDrop(t, body, ct)
		require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
		require.Contains(t, w.Body.String(), "nothing of this drop was kept")
		require.Empty(t, drops(t, s), "the refused drop's folder and the file written before the refusal are gone")

		// Cut off: a real connection that sends part of a file and closes.
		before := strings.Join(drops(t, s), ",")
		conn, err := net.Dial("tcp", s.addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close() }) // closed below; here too if the test stops first, or the server would wait for it
		head := fmt.Sprintf("POST /api/uploads HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n%s: crmimport\r\n"+
			"Content-Type: multipart/form-data; boundary=B\r\nContent-Length: %d\r\n\r\n", s.addr, s.token, RequestedBy, 1<<20)
		part := "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"contacts.csv\"\r\n\r\nid,first_name\n" +
			strings.Repeat("c1,Ann\n", 20000)
		_, err = io.WriteString(conn, head+part)
		require.NoError(t, err)
		var cut string // the cut-off drop's folder
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) && cut == "" {
			for _, d := range drops(t, s) {
				st, err := os.Stat(filepath.Join(private(s, uploadsFolder), d, "contacts.csv"))
				if !strings.Contains(before, d) && err == nil && st.Size() > 0 {
					cut = d
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		require.NotEmpty(t, cut, "the drop is being written")
		require.NoError(t, conn.Close())
		for time.Now().Before(deadline) && strings.Contains(strings.Join(drops(t, s), ","), cut) {
			time.Sleep(20 * time.Millisecond)
		}
		require.NotContains(t, drops(t, s), cut, "what the cut-off drop wrote is gone")

		body, ct = drop(t, [2]string{"contacts.csv", "id,first_name\nc1,Ann\n"})
		w = s.postDrop(t, body, ct)
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		require.Len(t, drops(t, s), 1, "a drop that is taken is kept")
	})
}

// uploadList is GET /api/uploads.
type uploadList struct {
	Folder  string `json:"folder"`
	Uploads []struct {
		Name  string `json:"name"`
		Path  string `json:"path"`
		Size  int64  `json:"size"`
		Files []struct {
			Name string `json:"name"`
			Size int64  `json:"size"`
		} `json:"files"`
		Runs []struct {
			Run         int64  `json:"run"`
			Status      string `json:"status"`
			Interrupted bool   `json:"interrupted"`
		} `json:"runs"`
	} `json:"uploads"`
}

// TestUploadsAreListedAndDeleted: issue 23 item 23 — the drops kept in the
// uploads folder are listed (files, sizes, the runs that read them), and
// one is deleted by a POST; a drop a running run reads is not (R13: stop
// it first, 409 with the CLI's exit code 6), nor is a name that is not a
// drop's.
func TestUploadsAreListedAndDeleted(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := pausingServer(t, addr, 40, "150ms")
		export := t.TempDir()
		_, err := gen.Write(export, gen.Config{Contacts: 1200, Seed: 9})
		require.NoError(t, err)
		var files [][2]string
		for _, name := range []string{"companies.csv", "contacts.csv"} {
			b, err := os.ReadFile(filepath.Join(export, name))
			require.NoError(t, err)
			files = append(files, [2]string{name, string(b)})
		}
		var paths []string
		for _, f := range [][][2]string{files, {{"notes.csv", "id,body\nn1,Hi\n"}}} {
			body, ct := drop(t, f...)
			w := s.postDrop(t, body, ct)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			var doc struct{ Path string }
			require.NoError(t, jsonDecode(w.Body, &doc))
			paths = append(paths, doc.Path)
		}
		res, doc := s.api(t, http.MethodPost, "/api/imports", map[string]any{"path": paths[0], "tenant": "acme", "source": "canonical", "batch_size": 30})
		require.Equal(t, http.StatusAccepted, res.StatusCode, doc)
		run := int64(doc["run"].(float64))

		var list uploadList
		s.getJSON(t, "/api/uploads", &list)
		require.Equal(t, private(s, uploadsFolder), list.Folder)
		require.Len(t, list.Uploads, 2)
		byPath := map[string]int{}
		for i, u := range list.Uploads {
			byPath[u.Path] = i
			require.Equal(t, filepath.Join(list.Folder, u.Name), u.Path)
		}
		busy, free := list.Uploads[byPath[paths[0]]], list.Uploads[byPath[paths[1]]]
		require.Len(t, busy.Files, 2)
		require.Equal(t, busy.Files[0].Size+busy.Files[1].Size, busy.Size)
		require.Len(t, busy.Runs, 1)
		require.Equal(t, run, busy.Runs[0].Run)
		require.Equal(t, "running", busy.Runs[0].Status)
		require.Empty(t, free.Runs)
		require.Equal(t, int64(len("id,body\nn1,Hi\n")), free.Size)

		res, doc = s.api(t, http.MethodPost, "/api/uploads/"+busy.Name+"/delete", nil)
		require.Equal(t, http.StatusConflict, res.StatusCode, doc)
		require.Equal(t, float64(6), doc["exit_code"])
		require.Equal(t, float64(run), doc["live_run"])
		require.Contains(t, doc["error"], fmt.Sprintf("crmimport stop %d", run))
		require.DirExists(t, paths[0], "a drop a running run reads stays")

		for _, name := range []string{"nope", "%2E%2E", "x%2F..%2F..", "%2E", busy.Name + "%2F..%2F.."} {
			res, doc = s.api(t, http.MethodPost, "/api/uploads/"+name+"/delete", nil)
			require.Equal(t, http.StatusNotFound, res.StatusCode, "%s: %v", name, doc)
			require.Contains(t, doc["error"], "no drop called", name)
		}
		require.DirExists(t, list.Folder)

		res, doc = s.api(t, http.MethodPost, "/api/uploads/"+free.Name+"/delete", nil)
		require.Equal(t, http.StatusOK, res.StatusCode, doc)
		require.Equal(t, free.Name, doc["deleted"])
		require.NoDirExists(t, paths[1])
		s.getJSON(t, "/api/uploads", &list)
		require.Len(t, list.Uploads, 1)

		// Once the run is stopped, its drop can go; the list said which run read it.
		res, doc = s.api(t, http.MethodPost, fmt.Sprintf("/api/runs/%d/stop", run), nil)
		require.Equal(t, http.StatusOK, res.StatusCode, doc)
		s.readEvents(t, run, "", func(e sse) bool { return strings.Contains(e.data, `"status":"cancelled"`) })
		s.getJSON(t, "/api/uploads", &list)
		require.Equal(t, "cancelled", list.Uploads[0].Runs[0].Status)
		res, doc = s.api(t, http.MethodPost, "/api/uploads/"+busy.Name+"/delete", nil)
		require.Equal(t, http.StatusOK, res.StatusCode, doc)
		require.NoDirExists(t, paths[0])
	})
}

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }

// getJSON decodes the answer of a GET through the server's handler.
func (s *Server) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	w := s.do(t, req{http.MethodGet, path, s.addr, nil, true})
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.NoError(t, jsonDecode(w.Body, v))
}
