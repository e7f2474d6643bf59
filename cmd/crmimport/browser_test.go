package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/desktop"
	"crmimport/failpoint"
	"crmimport/fixtures/gen"
	"crmimport/phases"
	"crmimport/store"
)

// The desktop in a real browser (issue 13): Debian's Chromium, driven by
// chromedp, against the real server on a real database. A browser test
// never skips itself: without Chromium it fails, saying how to install it
// (make test installs it where it can).

// chromium finds the browser, or fails the test naming the package.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the browser tests need Chromium: install Debian's package with `apt-get install -y chromium` " +
		"(make test does it where it can), or put chromium on PATH")
	return ""
}

// shots is where the screenshots go: a folder that outlives the test, so
// that they can be looked at; its path is logged.
func shots(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CRMIMPORT_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "crmimport-screenshots")
	}
	require.NoError(t, os.MkdirAll(dir, 0o700))
	t.Logf("screenshots in %s", dir)
	return dir
}

// browser starts a headless Chromium for one test.
func browser(t *testing.T) context.Context {
	t.Helper()
	// Chromium's own temporary folders (its singleton socket's, which a
	// killed browser never removes) go in a folder of the test's, removed
	// after the browser: a short one, for a socket's path is at most 107
	// bytes, and t.TempDir's, named after the test, can be longer.
	tmp, err := os.MkdirTemp("", "crmimport-chromium-")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, os.RemoveAll(tmp)) })
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.NoFirstRun,
		chromedp.WindowSize(1280, 800), chromedp.UserDataDir(t.TempDir()), chromedp.Env("TMPDIR="+tmp))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	// A bound against a page that never comes, not a speed limit: on a
	// loaded machine the browser tests together take minutes.
	ctx, cancelTime := context.WithTimeout(ctx, 6*time.Minute)
	t.Cleanup(func() { cancelTime(); cancel(); cancelAlloc() })
	require.NoError(t, chromedp.Do(ctx), "start Chromium")
	return ctx
}

// serve starts the desktop on the database at path, in this process.
func serve(t *testing.T, path string) *desktop.Server {
	t.Helper()
	return serveWith(t, path, "")
}

// serveWith is serve with failpoints (SPEC §8) for the runs the desktop
// itself works on.
func serveWith(t *testing.T, path, failpoints string) *desktop.Server {
	t.Helper()
	set, err := failpoint.Parse(failpoints, canon.ParseKind)
	require.NoError(t, err)
	s, err := desktop.New(context.Background(), desktop.Config{DBPath: path,
		Engine: func(db *sql.DB) *phases.Engine { return phases.New(db, set) }})
	require.NoError(t, err)
	go func() { _ = s.Serve() }() // ends with Shutdown
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, s.Shutdown(ctx))
	})
	return s
}

func shoot(ctx context.Context, t *testing.T, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o600))
}

// shootView takes what the window shows (a dialog over the page).
func shootView(ctx context.Context, t *testing.T, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o600))
}

// do runs browser actions, failing the test on an error.
func do(ctx context.Context, t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, actions...))
}

// click presses the first element sel matches once the page has settled:
// nothing on it aria-busy (a form reading its export, a list loading) and
// the element where it was at the look before. A click is a press at the
// element's place: what a reply then shows above it (a recognition, the
// encoding's words) moves it, and the press lands beside it.
func click(sel string) chromedp.Action[chromedp.Void] {
	q, _ := json.Marshal(sel) // a string: it marshals
	settled := fmt.Sprintf(`(() => {
		const e = document.querySelector(%s);
		if (!e || document.querySelector("[aria-busy=true]")) return false;
		const r = e.getBoundingClientRect(), at = [r.x, r.y, r.width, r.height, scrollX, scrollY].join(" ");
		const seen = window.__clickAt === at;
		window.__clickAt = at;
		return seen;
	})()`, q)
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		// Each try looks afresh (its first look is its own, not one of a
		// click before); a try that meets a page going to another (a
		// navigation ends the poll) tries again on the new one.
		deadline := time.Now().Add(60 * time.Second)
		for {
			_, err := chromedp.Evaluate[bool](`(window.__clickAt = null) === null`)(ctx, tg)
			if err == nil {
				_, err = chromedp.Poll[bool](settled, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(5*time.Second))(ctx, tg)
			}
			if err == nil {
				_, err = chromedp.Click(chromedp.CSS(sel))(ctx, tg)
				return err
			}
			if ctx.Err() != nil || time.Now().After(deadline) {
				return fmt.Errorf("%s: the page never settled for a click: %w", sel, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// textOf reads the text of the first node that sel matches. A node the
// page replaced between the query and the read is looked for again.
func textOf(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	var s string
	var err error
	for try := 0; try < 5; try++ {
		if s, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel))); err == nil || !stale(err) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, err, sel)
	return strings.TrimSpace(s)
}

// stale says whether a query failed because the node it found went from
// the page (re-rendered, or the page reloaded) before it was read.
func stale(err error) bool {
	m := err.Error()
	return strings.Contains(m, "No node with given id found") || strings.Contains(m, "Could not find node with given id") ||
		strings.Contains(m, "Cannot find context with specified id") || strings.Contains(m, "Node with given id does not belong to the document")
}

// valueOf reads the value of the first input that sel matches.
func valueOf(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(sel)))
	require.NoError(t, err, sel)
	return s
}

// tryText reads the text of sel if the page shows it within a moment
// (the page may be reloading), else "".
func tryText(ctx context.Context, sel string) string {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// waitText waits until the text of sel holds want.
func waitText(ctx context.Context, t *testing.T, sel, want string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		if got = tryText(ctx, sel); strings.Contains(strings.ToLower(got), strings.ToLower(want)) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s never showed %q (last: %q)", sel, want, got)
}

// waitJS waits until the page's expr is true, asking it again after each
// short try (the page may be reloading), and says what the page showed
// when it never is.
func waitJS(ctx context.Context, t *testing.T, expr, what string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		try, cancel := context.WithTimeout(ctx, time.Second)
		ok, err := chromedp.Run(try, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	try, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	state, err := chromedp.Run(try, chromedp.Evaluate[string](`location.href + " · " + (document.querySelector("[data-run-page]") || {outerHTML: "no run page"}).outerHTML.slice(0, 300) + " · message: " + ((document.querySelector("#import-message, [data-field=message]") || {}).textContent || "") + " · buttons: " + Array.from(document.querySelectorAll("button")).map(b => b.textContent.trim() + (b.disabled ? " (disabled)" : "")).join(", ")`))
	t.Fatalf("never saw %s (the page: %s %v)", what, state, err)
}

// importToRunPage presses New import's Import, once the form has read the
// export, and waits for the run's page it opens. Each look is a new evaluation: a query begun on the import page
// (which shows the dry run's outcomes too, in the run page's table) could
// outlive its document when the page goes to the run's.
func importToRunPage(ctx context.Context, t *testing.T) {
	t.Helper()
	// What the form shows once it has read the export (its recognition, a
	// preview) moves the buttons: a click then would land beside Import.
	do(ctx, t, click("#import"))
	waitJS(ctx, t, `location.pathname.startsWith("/runs/") && !!document.querySelector("[data-run-page] table.outcomes")`, "the run's page after Import")
}

// waitEnded waits until a run's page shows the run ended with status and
// has reloaded itself (app.js reloads the page a moment after the end), and
// loaded whole: a navigation begun before that reload is aborted by it
// (net::ERR_ABORTED), a screenshot of a page still loading has no size.
func waitEnded(ctx context.Context, t *testing.T, status string) {
	t.Helper()
	waitText(ctx, t, "h1 [data-field=status]", status)
	waitJS(ctx, t, fmt.Sprintf(`(() => { const p = document.querySelector("[data-run-page][data-live=false]"),
		s = document.querySelector("h1 [data-field=status]");
		return document.readyState === "complete" && !!p && !!s && s.textContent.trim().toLowerCase().includes(%q); })()`, status),
		"the run's page reloaded after its end, "+status)
}

// slowExport is an export big enough, and a run of it slow enough (a pause
// before each of its first contact batches), to be watched.
func slowExport(t *testing.T) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	_, err := gen.Write(dir, gen.Config{Contacts: 1500, Seed: 7})
	require.NoError(t, err)
	var fps []string
	for n := 1; n <= 12; n++ {
		fps = append(fps, fmt.Sprintf("batch:contact:%d=sleep:300ms", n))
	}
	return dir, map[string]string{"CRMIMPORT_FAILPOINTS": strings.Join(fps, ",")}
}

// TestDesktopInABrowser: the pages of SPEC §9 in Chromium — the runs, a
// run of another process watched live to its end, stopped from the page
// and resumed, a new import with a dry run first, a note's <script> shown
// as text, and the HTML report's bars — with a screenshot of each page.
func TestDesktopInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	path := filepath.Join(t.TempDir(), "crm.db")
	r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "demo", "--source", "canonical", demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	// The runs the desktop works on pause before their first contact
	// batches, so that a resumed run is seen working on its page.
	_, slow := slowExport(t)
	s := serveWith(t, path, slow["CRMIMPORT_FAILPOINTS"])
	ctx := browser(t)
	base := "http://" + s.Addr()

	// The runs page, through the token in the address.
	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("table.runs")))
	require.Contains(t, textOf(ctx, t, "table.runs"), "demo")
	shoot(ctx, t, out, "01-runs")

	// A run's page.
	do(ctx, t, click("table.runs a"), chromedp.WaitVisible(chromedp.CSS("table.outcomes")))
	require.Contains(t, textOf(ctx, t, "h1"), "Run 1")
	shoot(ctx, t, out, "02-run")
	do(ctx, t, chromedp.Navigate(base+"/runs/1/failed"), chromedp.WaitVisible(chromedp.CSS("table.failed")))
	shoot(ctx, t, out, "03-failed")
	do(ctx, t, chromedp.Navigate(base+"/runs/1/skipped"), chromedp.WaitVisible(chromedp.CSS("h1")))
	shoot(ctx, t, out, "04-skipped")
	for _, p := range []string{"ledger", "profiles"} {
		do(ctx, t, chromedp.Navigate(base+"/"+p), chromedp.WaitVisible(chromedp.CSS("h1")))
		shoot(ctx, t, out, "05-"+p)
	}

	// A run started by the command line in another process shows live:
	// at least three different progress values, then its end.
	export, env := slowExport(t)
	child := startChild(t, env, "--db", path, "--json", "run", "--tenant", "live", "--source", "canonical", "--batch-size", "40", export)
	id := waitForRun(t, path, "live", child)
	do(ctx, t, chromedp.Navigate(fmt.Sprintf("%s/runs/%d", base, id)), chromedp.WaitVisible(chromedp.CSS("table.tasks")))
	seen := map[string]bool{}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if rows := tryText(ctx, "table.tasks tbody"); rows != "" { // "" while the page reloads at the end
			seen[rows] = true
		}
		status := tryText(ctx, "h1 [data-field=status]")
		if len(seen) == 3 {
			shoot(ctx, t, out, "06-run-live")
		}
		if s := strings.TrimSpace(status); s != "" && s != "RUNNING" && s != "running" {
			break
		}
		time.Sleep(150 * time.Millisecond)
	}
	require.GreaterOrEqual(t, len(seen), 3, "the page showed the run's progress as it went: %d states", len(seen))
	require.Equal(t, exitOK, child.wait(t), child.stderr.String())
	waitEnded(ctx, t, "succeeded")
	shoot(ctx, t, out, "07-run-done")

	// Stop a run from its page, then resume it from there.
	export2, env2 := slowExport(t)
	child = startChild(t, env2, "--db", path, "--json", "run", "--tenant", "stopme", "--source", "canonical", "--batch-size", "40", export2)
	id = waitForRun(t, path, "stopme", child)
	do(ctx, t, chromedp.Navigate(fmt.Sprintf("%s/runs/%d", base, id)),
		chromedp.WaitEnabled(chromedp.CSS(fmt.Sprintf(`button[data-post="/api/runs/%d/stop"]`, id))),
		click(fmt.Sprintf(`button[data-post="/api/runs/%d/stop"]`, id)))
	require.Equal(t, exitCancelled, child.wait(t), child.stderr.String())
	waitEnded(ctx, t, "cancelled")
	shoot(ctx, t, out, "08-run-stopped")
	// Issue 23 item 16: the stop is told as the page's, not as
	// `crmimport stop` from another host.
	taskNotes := textOf(ctx, t, "table.tasks tbody")
	require.Contains(t, taskNotes, "stop requested by the desktop (`crmimport ui`)")
	require.NotContains(t, taskNotes, "another host")
	resume := fmt.Sprintf(`button[data-post="/api/runs/%d/resume"]`, id)
	// The page reloads itself once the run has ended, and then offers it: a
	// wait begun in the page before the reload may be lost with it, so the
	// page is asked again and again.
	waitJS(ctx, t, fmt.Sprintf(`(() => { const p = document.querySelector("[data-run-page]"), b = document.querySelector(%q);
		return !!p && p.dataset.live === "false" && !!b && !b.disabled; })()`, resume), "the ended run's page, offering Resume")
	require.Contains(t, textOf(ctx, t, resume), "Resume —")
	do(ctx, t, click(resume))
	// Issue 23 item 12: the resumed run's page shows it working, never the
	// end of the attempt before (which its event stream handed it, kept
	// from then: the page showed CANCELLED and reloaded itself until the
	// run ended).
	live := `(() => { const p = document.querySelector("[data-run-page]"), s = document.querySelector("h1 [data-field=status]");
		return p && s && p.dataset.live === "true" ? s.textContent.trim() : ""; })()`
	var shown []string
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		try, cancel := context.WithTimeout(ctx, time.Second)
		st, err := chromedp.Run(try, chromedp.Evaluate[string](live))
		cancel()
		if err == nil && st != "" && (len(shown) == 0 || shown[len(shown)-1] != st) {
			shown = append(shown, st)
		}
	}
	require.Equal(t, []string{"running"}, shown, "the resumed run's live page showed the run as it is")
	shoot(ctx, t, out, "09-run-resuming")
	waitEnded(ctx, t, "succeeded")
	shoot(ctx, t, out, "09-run-resumed")

	// New import: a dry run first, then the import, whose page follows.
	notes := writeExport(t, map[string]string{
		"companies.csv": "id,name\nco-1,Acme <b>Bold</b>\n",
		"contacts.csv":  "id,first_name,company_id\nc-1,Ann,co-1\n",
		"notes.csv":     "id,body,contact_id,created_at\nn-1,<script>window.__pwned=1</script>,c-1,not a date\nn-2,fine,c-1,\n",
	})
	do(ctx, t, chromedp.Navigate(base+"/import"), chromedp.WaitVisible(chromedp.CSS("#import-form")),
		chromedp.SendKeys(chromedp.CSS("#path"), notes), chromedp.SendKeys(chromedp.CSS(`input[name=tenant]`), "web"),
		click("#inspect"), chromedp.WaitVisible(chromedp.CSS("#preview")))
	require.Contains(t, textOf(ctx, t, "#preview"), "notes.csv")
	shoot(ctx, t, out, "10-import-preview")
	do(ctx, t, click("#dry-run"), chromedp.WaitVisible(chromedp.CSS("#dry-result")))
	waitText(ctx, t, "#import-message", "nothing was written")
	shoot(ctx, t, out, "11-import-dry-run")
	require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM migrations WHERE tenant_id = 'web'`), "a dry run writes nothing")
	importToRunPage(ctx, t)
	waitEnded(ctx, t, "partial")
	url, err := chromedp.Run(ctx, chromedp.Location())
	require.NoError(t, err)
	webRun := url[strings.LastIndex(url, "/")+1:]
	shoot(ctx, t, out, "12-import-run")

	// A note's body is text, never a script.
	do(ctx, t, chromedp.Navigate(base+"/runs/"+webRun+"/failed"), chromedp.WaitVisible(chromedp.CSS("table.failed")))
	cell, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`table.failed textarea[data-cell="body"]`)))
	require.NoError(t, err)
	require.Equal(t, "<script>window.__pwned=1</script>", cell, "the body as text, in its cell's input")
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__pwned === 1`))
	require.NoError(t, err)
	require.False(t, pwned, "the note's script did not run")
	shoot(ctx, t, out, "13-failed-script-as-text")

	// The HTML report: self-contained, its bars as wide as their counts.
	report := filepath.Join(t.TempDir(), "run-1.html")
	r = crm(t, nil, "--db", path, "report", "1", "--format", "html", "--out", report)
	require.Equal(t, exitOK, r.code, r.stderr)
	do(ctx, t, chromedp.Navigate("file://"+report), chromedp.WaitVisible(chromedp.CSS("table.outcomes")))
	widths, err := chromedp.Run(ctx, chromedp.Evaluate[[]map[string]string](`Array.from(document.querySelectorAll("table.outcomes tbody tr")).map(tr => {
		const o = {kind: tr.getAttribute("data-kind")};
		for (const r of tr.querySelectorAll("rect")) o[r.getAttribute("data-outcome")] = String(r.getBoundingClientRect().width);
		for (const f of ["imported", "unchanged", "skipped", "failed"]) o["n_" + f] = tr.querySelector("[data-field=" + f + "]").textContent;
		return o; })`))
	require.NoError(t, err)
	require.NotEmpty(t, widths)
	for _, row := range widths {
		var total, barWidth float64
		counts := map[string]float64{}
		for _, f := range []string{"imported", "unchanged", "skipped", "failed"} {
			n, err := strconv.ParseFloat(strings.ReplaceAll(row["n_"+f], ",", ""), 64)
			require.NoError(t, err)
			w, err := strconv.ParseFloat(row[f], 64)
			require.NoError(t, err)
			counts[f], total, barWidth = n, total+n, barWidth+w
		}
		for _, f := range []string{"imported", "unchanged", "skipped", "failed"} {
			w, _ := strconv.ParseFloat(row[f], 64)
			require.InDelta(t, counts[f]/total*barWidth, w, 1.5, "%s: the %s part of the bar is as wide as its share", row["kind"], f)
		}
	}
	shoot(ctx, t, out, "14-html-report")
	b, err := os.ReadFile(report)
	require.NoError(t, err)
	for _, ref := range []string{"<script", "src=", "href=\"http", "url(", "@import"} {
		require.NotContains(t, string(b), ref, "the report loads nothing from anywhere")
	}
}

// TestUICommand: `crmimport ui` refuses an address another machine could
// reach (exit 2), prints one JSON document with its address under --json,
// answers only with its token, and stops cleanly on SIGTERM.
func TestUICommand(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db")
	for _, addr := range []string{"0.0.0.0:0", "192.168.1.1:8080", ":0", "127.0.0.2:0"} {
		r := crm(t, nil, "--db", path, "ui", "--no-open", "--addr", addr)
		require.Equal(t, exitUsage, r.code, "%s: %s", addr, r.stderr)
		require.Contains(t, r.stderr, "loopback")
	}
	b, err := json.Marshal([]string{"--db", path, "--json", "ui", "--no-open", "--create"})
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CRMIMPORT_TEST_CHILD=1", "CRMIMPORT_TEST_ARGS="+string(b))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // gone already when the test passes
	var doc struct{ URL, Addr string }
	require.NoError(t, json.NewDecoder(stdout).Decode(&doc), "one JSON document once it listens")
	require.NotEmpty(t, doc.URL)
	require.True(t, strings.HasPrefix(doc.URL, "http://127.0.0.1:"), doc.URL)
	require.Contains(t, doc.URL, doc.Addr)
	token := doc.URL[strings.Index(doc.URL, "token=")+len("token="):]
	require.Len(t, token, 32)
	res, err := http.Get("http://" + doc.Addr + "/api/runs")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	req, err := http.NewRequest(http.MethodGet, "http://"+doc.Addr+"/api/runs", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, cmd.Wait(), "exits 0 on SIGTERM")
	require.Contains(t, stderr.String(), "stopping the desktop")
}

// TestUndoInABrowser: Undo from the run page (R16, SPEC §9) — the demo
// run's page offers Undo labelled by what it takes back; pressing it shows
// what `undo --dry-run` shows and a confirmation naming the counts; once
// confirmed, the undo's own page shows it to its end; the runs page shows
// the run undone by it, linked; and the run's rows and slots are gone.
func TestUndoInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	path := filepath.Join(t.TempDir(), "crm.db")
	r := crm(t, nil, "--db", path, "--json", "run", "--tenant", "demo", "--source", "canonical", demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	slots := query(t, path, `SELECT count(*) FROM migration_records WHERE migration_id = 1`)[0]
	s := serve(t, path)
	ctx := browser(t)
	base := "http://" + s.Addr()

	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("table.runs")),
		chromedp.Navigate(base+"/runs/1"), chromedp.WaitEnabled(chromedp.CSS("#undo")))
	require.Equal(t, "Undo — take back "+slots+" records", textOf(ctx, t, "#undo"))
	do(ctx, t, click("#undo"), chromedp.WaitVisible(chromedp.CSS("#undo-confirm")))
	preview := textOf(ctx, t, "#undo-body")
	for _, want := range []string{"Tenant demo", slots + " records to take back", "companies", "contacts", "deals", "notes", "activities"} {
		require.Contains(t, preview, want)
	}
	var p struct {
		Kinds map[string]struct{ Removed, Released, Restored, Cleared int64 }
	}
	r = crm(t, nil, "--db", path, "--json", "undo", "1", "--dry-run")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &p))
	removed := int64(0)
	for _, c := range p.Kinds {
		removed += c.Removed
	}
	contacts := p.Kinds["contact"]
	require.Equal(t, fmt.Sprintf("contacts %d %d %d %d", contacts.Removed, contacts.Released, contacts.Restored, contacts.Cleared),
		strings.Join(strings.Fields(textOf(ctx, t, "table.undo-preview tr[data-kind=contact]")), " "), "the page shows what --dry-run shows")
	require.Contains(t, textOf(ctx, t, "#undo-words"), fmt.Sprintf("The undo of run 1 removes %d rows with their slots", removed))
	require.Equal(t, "Undo run 1 — take back "+slots+" records", textOf(ctx, t, "#undo-confirm"))
	require.Equal(t, []string{"1"}, query(t, path, `SELECT count(*) FROM migrations`), "nothing is written before the confirmation")
	shootView(ctx, t, out, "20-undo-confirm")

	do(ctx, t, click("#undo-confirm"), chromedp.WaitVisible(chromedp.CSS("table.takenback")))
	waitEnded(ctx, t, "succeeded")
	do(ctx, t, chromedp.WaitVisible(chromedp.CSS(`button[data-post="/api/runs/2/stop"][disabled]`))) // the page, reloaded at the end
	require.Contains(t, textOf(ctx, t, "h1"), "Run 2")
	require.Contains(t, textOf(ctx, t, "h1"), "undo of run 1")
	waitText(ctx, t, "table.tasks tbody", "items")
	shoot(ctx, t, out, "21-undo-run")

	do(ctx, t, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("table.runs")))
	require.Equal(t, "undone by run 2", textOf(ctx, t, "tr[data-run='1'] td.undo"))
	require.Contains(t, textOf(ctx, t, "tr[data-run='2'] td.undo"), fmt.Sprintf("undo of run 1: %d removed", removed))
	shoot(ctx, t, out, "22-runs-undone")
	do(ctx, t, click("tr[data-run='1'] td.undo a"), chromedp.WaitVisible(chromedp.CSS("table.takenback")))

	for _, table := range []string{"companies", "contacts", "deals", "notes", "activities", "emails"} {
		require.Equal(t, []string{"0"}, query(t, path, "SELECT count(*) FROM "+table+" WHERE tenant_id = 'demo'"), "%s of the run are gone", table)
	}
	require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM migration_records WHERE tenant_id = 'demo'`), "its slots are gone")
	r = crm(t, nil, "--db", path, "--json", "runs")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, `"undone_by": 2`)
}

// TestUndoWithDependentsInABrowser: the first run imported the companies,
// the second the contacts that link to them (as `make demo` does): Undo of
// the first is refused on the page with the dependents listed per run and
// kind, count and example ids (an id of the export is text, never markup);
// the --cascade offer shows what it takes back too in a second
// confirmation, and once taken both runs' records are back out, except the
// second run's contact that links to nothing of the first.
func TestUndoWithDependentsInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	path := filepath.Join(t.TempDir(), "crm.db")
	evil := `<img src=x onerror=window.__pwned=1>`
	export := writeExport(t, map[string]string{
		"companies.csv": "id,name\nco-1,Acme\nco-2,Globex\n",
		"contacts.csv":  "id,first_name,company_id\nc-1,Ann,co-1\n" + evil + ",Bob,co-2\nc-3,Cy,\n",
	})
	r := crm(t, nil, "--db", path, "--quiet", "run", "--tenant", "acme", "--source", "canonical", "--only", "companies", export)
	require.Equal(t, exitOK, r.code, r.stderr)
	r = crm(t, nil, "--db", path, "--quiet", "run", "--tenant", "acme", "--source", "canonical", export)
	require.Equal(t, exitOK, r.code, r.stderr)
	s := serve(t, path)
	ctx := browser(t)
	base := "http://" + s.Addr()

	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("table.runs")),
		chromedp.Navigate(base+"/runs/1"), chromedp.WaitEnabled(chromedp.CSS("#undo")))
	require.Equal(t, "Undo… — 2 records of other runs depend on it", textOf(ctx, t, "#undo"))
	do(ctx, t, click("#undo"), chromedp.WaitVisible(chromedp.CSS("#undo-cascade")))
	require.Contains(t, textOf(ctx, t, "#undo-refused"), "Run 1 cannot be undone alone")
	require.Equal(t, "run 2 canonical contacts link to its rows 2 "+evil+", c-1",
		strings.Join(strings.Fields(textOf(ctx, t, "table.dependents tr[data-dependent-run='2']")), " "))
	markup, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#undo-dialog img").length`))
	require.NoError(t, err)
	require.Zero(t, markup, "an id of the export is text, not markup")
	hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("undo-confirm").hidden`))
	require.NoError(t, err)
	require.True(t, hidden, "refused alone: nothing to confirm but the cascade offer")
	shootView(ctx, t, out, "23-undo-dependents")

	do(ctx, t, click("#undo-cascade"), chromedp.WaitVisible(chromedp.CSS("#undo-confirm")))
	require.Contains(t, textOf(ctx, t, "#undo-words"), "With --cascade it takes back too 2 contacts of run 2")
	require.Equal(t, "Undo run 1 with --cascade — take back 4 records", textOf(ctx, t, "#undo-confirm"))
	require.Equal(t, []string{"2"}, query(t, path, `SELECT count(*) FROM migrations`), "nothing is written before the second confirmation")
	shootView(ctx, t, out, "24-undo-cascade-confirm")

	do(ctx, t, click("#undo-confirm"), chromedp.WaitVisible(chromedp.CSS("table.takenback")))
	waitEnded(ctx, t, "succeeded")
	do(ctx, t, chromedp.WaitVisible(chromedp.CSS(`button[data-post="/api/runs/3/stop"][disabled]`)))
	require.Contains(t, textOf(ctx, t, "h1"), "undo of run 1")
	shoot(ctx, t, out, "25-undo-cascade-run")
	do(ctx, t, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("table.runs")))
	require.Equal(t, "undone by run 3", textOf(ctx, t, "tr[data-run='1'] td.undo"))

	require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM companies WHERE tenant_id = 'acme'`))
	require.Equal(t, []string{"c-3"}, query(t, path, `SELECT source_id FROM migration_records WHERE tenant_id = 'acme'`),
		"both runs' records are taken back, except the one that depends on nothing of run 1")
	require.Equal(t, []string{"1"}, query(t, path, `SELECT count(*) FROM contacts WHERE tenant_id = 'acme'`))
}

// TestUndoConfirmationIsThePlanItShowedInABrowser (issue 23 item 3; R16,
// SPEC §11): the run page's Undo previews the plan under --cascade; another
// run imports two more records that depend on it before the confirmation;
// the confirmation takes back nothing — not more than it showed — and the
// dialog says what changed and shows the plan as it is now, which a second
// confirmation takes back.
func TestUndoConfirmationIsThePlanItShowedInABrowser(t *testing.T) {
	t.Parallel()
	out := shots(t)
	path := filepath.Join(t.TempDir(), "crm.db")
	r := crm(t, nil, "--db", path, "--quiet", "run", "--tenant", "acme", "--source", "canonical", "--only", "companies", demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	r = crm(t, nil, "--db", path, "--quiet", "run", "--tenant", "acme", "--source", "canonical", "--only", "contacts", demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	s := serve(t, path)
	ctx := browser(t)
	base := "http://" + s.Addr()

	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("table.runs")),
		chromedp.Navigate(base+"/runs/1"), chromedp.WaitEnabled(chromedp.CSS("#undo")))
	do(ctx, t, click("#undo"), chromedp.WaitVisible(chromedp.CSS("#undo-cascade")))
	do(ctx, t, click("#undo-cascade"), chromedp.WaitVisible(chromedp.CSS("#undo-confirm")))
	var shown struct {
		Total int    `json:"total"`
		Plan  string `json:"plan"`
	}
	r = crm(t, nil, "--db", path, "--json", "undo", "1", "--cascade", "--dry-run")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &shown))
	require.Equal(t, fmt.Sprintf("Undo run 1 with --cascade — take back %d records", shown.Total), textOf(ctx, t, "#undo-confirm"))
	do(ctx, t, chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#undo-plan[data-plan=%q]`, shown.Plan))))

	// Between the preview and the confirmation, another run imports two
	// contacts of run 1's Brightwater Bakery.
	r = crm(t, nil, "--db", path, "--json", "run", "--tenant", "acme", "--source", "canonical", demoLater)
	require.Equal(t, exitOK, r.code, r.stderr)
	later := r.summary(t).Run
	before := query(t, path, `SELECT count(*) FROM contacts WHERE tenant_id = 'acme'`)

	do(ctx, t, click("#undo-confirm"))
	waitJS(ctx, t, `!!document.querySelector("#undo-message.error") || !!document.querySelector("table.takenback")`, "the confirmation's answer")
	require.Equal(t, []string{"3"}, query(t, path, `SELECT count(*) FROM migrations`),
		"the confirmation of a plan of %d records must not take back the %d records the plan has now", shown.Total, shown.Total+2)
	require.Equal(t, before, query(t, path, `SELECT count(*) FROM contacts WHERE tenant_id = 'acme'`), "nothing was taken back")
	require.Contains(t, textOf(ctx, t, "#undo-message"), fmt.Sprintf("its plan changed since the preview: 2 more contacts of run %d to remove; nothing was written", later))
	require.Equal(t, fmt.Sprintf("Undo run 1 with --cascade — take back %d records", shown.Total+2), textOf(ctx, t, "#undo-confirm"),
		"the dialog shows the plan as it is now")
	shootView(ctx, t, out, "26-undo-plan-changed")

	do(ctx, t, click("#undo-confirm"), chromedp.WaitVisible(chromedp.CSS("table.takenback")))
	waitEnded(ctx, t, "succeeded")
	require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM companies WHERE tenant_id = 'acme'`))
	require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM migration_records WHERE source_id IN ('con-201', 'con-202')`),
		"the plan confirmed the second time: the two newcomers go too")
	require.Equal(t, []string{fmt.Sprint(shown.Total + 2)}, query(t, path, `SELECT count(*) FROM undo_items`))
}

// TestImportConfirmsItsDryRunInABrowser (issue 23 item 3; SPEC §11, R10):
// New import's Dry run shows a plan; a file of the export changes before
// Import, which then imports nothing and names the file; a Dry run again
// and Import import the export as it is now.
func TestImportConfirmsItsDryRunInABrowser(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db")
	companies, err := os.ReadFile(filepath.Join(demo, "companies.csv"))
	require.NoError(t, err)
	contacts, err := os.ReadFile(filepath.Join(demo, "contacts.csv"))
	require.NoError(t, err)
	export := writeExport(t, map[string]string{"companies.csv": string(companies), "contacts.csv": string(contacts)})
	s := serve(t, path)
	ctx := browser(t)
	base := "http://" + s.Addr()

	do(ctx, t, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.CSS("#main")),
		chromedp.Navigate(base+"/import"), chromedp.WaitVisible(chromedp.CSS("#import-form")),
		chromedp.SendKeys(chromedp.CSS("#path"), export), chromedp.SendKeys(chromedp.CSS(`input[name=tenant]`), "acme"),
		click("#dry-run"), chromedp.WaitVisible(chromedp.CSS("#dry-result")))
	waitText(ctx, t, "#import-message", "Import now imports exactly this plan")

	// The export changes between the dry run and the import.
	later := append(append([]byte{}, contacts...), "con-900,Zoe,Ng,zoe.ng@example.com,,,,2024-05-05,,\r\n"...)
	require.NoError(t, os.WriteFile(filepath.Join(export, "contacts.csv"), later, 0o600))
	do(ctx, t, click("#import"))
	waitText(ctx, t, "#import-message", "its plan changed since the dry run: contacts.csv (contact) changed")
	require.Equal(t, []string{"0"}, query(t, path, `SELECT count(*) FROM migrations`), "the import confirmed a plan that is not the export's any more: nothing was planned")

	do(ctx, t, click("#dry-run"))
	waitText(ctx, t, "#import-message", "Import now imports exactly this plan")
	importToRunPage(ctx, t)
	waitEnded(ctx, t, "partial")
	require.Equal(t, []string{"1"}, query(t, path, `SELECT count(*) FROM migration_records WHERE source_id = 'con-900'`), "the export as it is now")

	changesInABrowser(ctx, t, path, base)
}

// changesInABrowser (R17, SPEC §11, issue 25): run 1's page, given what a
// rerun of its export found changed at the source (inserted as the engine
// writes it), shows the counts beside the outcomes, the examples with the
// before and after of their fields as text (an export's <script> never
// runs), the command that applies them, the conflicts and the deletions
// never propagated; "Apply these changes" opens New import with its
// options and "Apply changes at the source" checked, whose dry run and
// Import make the run with --update.
func changesInABrowser(ctx context.Context, t *testing.T, path, base string) {
	t.Helper()
	out := shots(t)
	db, err := store.Open(context.Background(), path)
	require.NoError(t, err)
	for _, q := range []string{
		`UPDATE migration_tasks SET outdated = 3, conflict = 1, deleted_since = 1 WHERE migration_id = 1 AND kind = 'contact'`,
		`UPDATE migrations SET stats = NULL WHERE id = 1`, // read from the tasks
		`INSERT INTO record_changes (migration_id, kind, source_id, file, line, change, applicable, fields, before, after) VALUES
			(1, 'contact', 'con-001', 'contacts.csv', 2, 'outdated', 1, '["email","phone"]',
			 '{"email":"ann@old.example","phone":"555-0100"}', '{"email":"<img src=x onerror=window.__pwned=1>","phone":"555-0199"}'),
			(1, 'contact', 'con-002', 'contacts.csv', 3, 'outdated', 1, '["last_name"]', '{"last_name":"Ng"}', '{"last_name":"<script>window.__pwned=1</script>"}')`,
		`INSERT INTO record_changes (migration_id, kind, source_id, file, line, change, applicable, fields, edited, before, after) VALUES
			(1, 'contact', 'con-003', 'contacts.csv', 4, 'conflict', 0, '["title"]', '["title"]', '{"title":"CTO"}', '{"title":"CEO"}')`,
		`INSERT INTO record_changes (migration_id, kind, source_id, file, line, change) VALUES (1, 'contact', 'con-004', 'contacts.csv', 5, 'deleted_since')`,
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, db.Close())

	do(ctx, t, chromedp.Navigate(base+"/runs/1"), chromedp.WaitVisible(chromedp.CSS("section[data-section=changes]")))
	section := textOf(ctx, t, "section[data-section=changes]")
	for _, want := range []string{"Changed at the source", "applies 2 of 3 (1 is a conflict or matched)", "--update",
		"<img src=x onerror=window.__pwned=1>", "<script>window.__pwned=1</script>", "ann@old.example",
		"1 in conflict: edited by hand since import (title)", "--update=overwrite", "deletions are never propagated"} {
		require.Contains(t, section, want)
	}
	require.Equal(t, "3 (1 conflict)", textOf(ctx, t, "tr[data-kind=contact] [data-field=outdated]"))
	require.Equal(t, "1", textOf(ctx, t, "tr[data-kind=contact] [data-field=deleted_since]"))
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__pwned === 1`))
	require.NoError(t, err)
	require.False(t, pwned, "an export's markup is text")
	require.Equal(t, "Apply these changes — 2 records", strings.TrimSpace(textOf(ctx, t, "#apply-changes")))
	shoot(ctx, t, out, "40-run-changes")

	// "Apply these changes" opens New import with the run's options and
	// --update checked: a dry run, then Import of exactly that plan.
	do(ctx, t, click("#apply-changes"), chromedp.WaitVisible(chromedp.CSS("#import-form")))
	require.Contains(t, textOf(ctx, t, "[data-field=apply-from]"), "run 1 found")
	checked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("input[name=update]").checked`))
	require.NoError(t, err)
	require.True(t, checked, "--update is checked")
	require.Equal(t, query(t, path, `SELECT json_extract(options, '$.input') FROM migrations WHERE id = 1`)[0],
		valueOf(ctx, t, "#path"), "the run's export")
	do(ctx, t, click("#dry-run"))
	waitText(ctx, t, "#import-message", "Import now imports exactly this plan")
	importToRunPage(ctx, t)
	waitEnded(ctx, t, "partial")
	require.Equal(t, []string{"1"}, query(t, path, `SELECT count(*) FROM migrations WHERE id = 2 AND options LIKE '%"update":"apply"%'`),
		"a run of run 1's options with --update, through its dry run's plan")
	require.Equal(t, "--update", textOf(ctx, t, "[data-field=update]"), "the run says it applied changes at the source")
	shoot(ctx, t, out, "41-run-applied")
}
