package main

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"

	"crmimport/store/storetest"
)

// A report fit to send (issue 27 item 5): the HTML report in its two
// versions, the customer's and the full one, printed on A4 and Letter by
// Chromium, the pages turned into images by poppler's pdftoppm.

// pdftoppm finds poppler's pdftoppm, or fails the test saying how to
// install it (make test does where it can, as it does Chromium).
func pdftoppm(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("pdftoppm")
	if err != nil {
		t.Fatal("the report's print test turns PDF pages into images with pdftoppm: install Debian's poppler-utils " +
			"with `apt-get install -y poppler-utils` (make test does it where it can), or put pdftoppm on PATH")
	}
	return p
}

// paper is a sheet the report must print on, and the report's margins on
// it (app.css's @page): what is left between them is the content width.
type paper struct {
	name          string
	size          chromedp.PaperSize // inches
	widthMM       float64
	marginMM      float64
	contentWidth  int64 // CSS px (96 a inch): the width print media lays out in
	contentHeight int64
}

// papers are A4 and Letter, with app.css's @page margins of 14 mm.
func papers() []paper {
	const margin = 14.0
	px := func(mm float64) int64 { return int64(mm * 96 / 25.4) }
	return []paper{
		{"a4", chromedp.PaperA4, 210, margin, px(210 - 2*margin), px(297 - 2*margin)},
		{"letter", chromedp.PaperLetter, 215.9, margin, px(215.9 - 2*margin), px(279.4 - 2*margin)},
	}
}

// The export of the report to print: every kind, and long values where a
// table could be clipped — a company's 200-character name and its long
// web domain, long emails, an id of 150 characters, a long tenant — which
// the second run finds changed at the source, updates (--update), leaves
// in conflict, finds deleted since, fails, skips, unlinks and unowns.
var (
	longName   = strings.Repeat("Northwind Traders International Holdings ", 5)[:200]
	longName2  = strings.Repeat("Northwind-Traders-International-Holdings-", 5)[:200] // no space to wrap at
	longDomain = "procurement-and-vendor-relations.subsidiary-division.northwind-traders-international-holdings.example.com"
	longEmail  = "ann.archer.head.of.global.procurement.and.vendor.relations@subsidiary-division.northwind-traders-international.example.com"
	longEmail2 = "ann.archer.chief.procurement.officer.emea.benelux.and.nordics@subsidiary-division.northwind-traders-international.example.com"
	longID     = "con-" + strings.Repeat("0123456789abcdef", 10)[:146]
)

func sendExports(t *testing.T) (first, second string) {
	t.Helper()
	users := "id,email,name\nu-1,jane.admin@example.com,Jane Admin\n"
	first = writeExport(t, map[string]string{
		"users.csv":     users,
		"companies.csv": "id,name,domain,owner_id\nco-1," + longName + "," + longDomain + ",u-1\nco-2,Globex,globex.example,u-ghost\n",
		"contacts.csv": "id,first_name,last_name,email,phone,title,company_id,owner_id\n" +
			"c-1,Ann,Archer," + longEmail + ",555-0101,Buyer,co-1,u-1\n" +
			"c-2,Bob,Baker,bob@example.com,555-0102,,co-2,u-1\n" +
			"c-3,Cy,Cole,cy@example.com,555-0103,CTO,co-2,u-1\n" +
			"c-4,Dee,Dunn,dee@example.com,555-0104,,co-2,u-1\n",
		"leads.csv":      "id,first_name,last_name,email,company_name,status\nl-1,Lee,Lane,lee@example.com,Initech,new\n",
		"deals.csv":      "id,name,amount,company_id,contact_id\nd-1,Renewal 2024,12000.50,co-1,c-1\n",
		"notes.csv":      "id,body,contact_id\nn-1,Called about the renewal,c-1\n",
		"activities.csv": "id,type,subject,contact_id\na-1,call,Intro call,c-2\n",
		"emails.csv":     "id,subject,body,from,to,contact_id\ne-1,Quote,See attached,jane.admin@example.com," + longEmail + ",c-1\n",
	})
	second = writeExport(t, map[string]string{
		"users.csv":     users,
		"companies.csv": "id,name,domain,owner_id\nco-1," + longName2 + "," + longDomain + ",u-1\nco-2,Globex,globex.example,u-ghost\n",
		"contacts.csv": "id,first_name,last_name,email,phone,title,company_id,owner_id,deleted\n" +
			"c-1,Ann,Archer," + longEmail2 + ",555-0101,Buyer,co-1,u-1,\n" +
			"c-2,Bob,Baker,bob@example.com,555-0102,,co-2,u-1,\n" +
			"c-3,Cy,Cole,cy@example.com,555-0199,CTO,co-2,u-1,\n" +
			"c-4,Dee,Dunn,dee@example.com,555-0104,,co-2,u-1,true\n" +
			"c-5,Eve,Evans,eve@example.com,,,co-1,u-ghost,\n" +
			"c-6,Fay,Fox,fay@example.com,,,co-1,u-1,true\n" +
			longID + ",Gus,Gray,not-an-address,,,co-1,u-1,\n" +
			"c-8,Hal,Hunt,hal@example.com,,,co-missing,u-1,\n",
		"leads.csv":      "id,first_name,last_name,email,company_name,status\nl-1,Lee,Lane,lee@example.com,Initech,new\nl-2,Mo,Moss,mo@example.com,Umbrella,new\n",
		"deals.csv":      "id,name,amount,company_id,contact_id\nd-1,Renewal 2024,12000.50,co-1,c-1\nd-2,Expansion,\"12,000.00\",co-1,c-5\n",
		"notes.csv":      "id,body,contact_id\nn-1,Called about the renewal,c-1\nn-2,Who is this?,c-missing\nn-3,,c-1\n",
		"activities.csv": "id,type,subject,contact_id\na-1,call,Intro call,c-2\na-2,meeting,Kick-off,c-5\n",
		"emails.csv":     "id,subject,body,from,to,contact_id\ne-1,Quote,See attached,jane.admin@example.com," + longEmail + ",c-1\ne-2,Follow-up,Any news?,jane.admin@example.com," + longEmail2 + ",c-1\n",
	})
	return first, second
}

// TestReportFitToSendInABrowser (issue 27 item 5): on both engines, a run
// with every kind and long values (sendExports) is reported as HTML in
// both versions. The customer's holds none of the database's path, the
// export's folder, the machine's temp dir, a task number, a log line or a
// crmimport command, and says what needs the customer's action; the full
// one holds them (so the check can fail). Each version, in Chromium with
// print media at A4's and Letter's content widths, has no table wider than
// the page and nothing that scrolls; printed to PDF on A4 and on Letter,
// its pages (images by pdftoppm) have nothing in the right margin, and
// the bars' four colours in their order. The run page offers both
// downloads, named, and they are the command line's files.
func TestReportFitToSendInABrowser(t *testing.T) {
	t.Parallel()
	toppm := pdftoppm(t)
	out := shots(t)
	ctx := browser(t)
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		engine := filepath.Base(t.Name())
		first, second := sendExports(t)
		const tenant = "northwind-traders-international-holdings-emea-benelux"
		r := crm(t, nil, "--db", addr, "--quiet", "run", "--tenant", tenant, "--source", "canonical", first)
		require.Equal(t, exitOK, r.code, r.stderr)
		query(t, addr, `UPDATE contacts SET title = 'Edited by hand' WHERE id = (SELECT record_id FROM migration_records WHERE kind = 'contact' AND source_id = 'c-3')`)
		r = crm(t, nil, "--db", addr, "--json", "run", "--tenant", tenant, "--source", "canonical", "--update", second)
		require.Equal(t, exitPartial, r.code, r.stderr)
		s := r.summary(t)
		c := s.Kinds["contact"]
		require.True(t, c.Imported > 0 && c.Unchanged > 0 && c.Skipped > 0 && c.Failed > 0, "contacts show all four outcomes: %+v", c)
		require.Len(t, s.Kinds, 8, "every kind")

		dir := t.TempDir()
		files := map[string]string{}
		for _, version := range []string{"customer", "full"} {
			files[version] = filepath.Join(dir, "run-2-"+version+".html")
			r = crm(t, nil, "--db", addr, "report", "2", "--format", "html", "--for", version, "--out", files[version])
			require.Equal(t, exitOK, r.code, r.stderr)
		}
		customer, err := os.ReadFile(files["customer"])
		require.NoError(t, err)
		full, err := os.ReadFile(files["full"])
		require.NoError(t, err)
		for _, want := range []string{"What needs your action", "Please send us the list of your users", "Please tell us which version to keep",
			"should be removed there too", "could not be imported because a value in them is not valid", html.EscapeString(longID)} {
			require.True(t, strings.Contains(string(customer), want), "the customer's report says %q", want)
		}
		for what, leak := range leaks(t, addr, first, second) {
			if leak.inFull {
				require.True(t, strings.Contains(string(full), leak.s), "the full report holds %s, %q (else the check below could not fail)", what, leak.s)
			}
			require.False(t, strings.Contains(string(customer), leak.s), "the customer's report holds %s: %q", what, leak.s)
		}
		for _, cmd := range commands() {
			require.False(t, strings.Contains(string(customer), "crmimport "+cmd), "the customer's report names the command crmimport %s", cmd)
		}
		text := regexp.MustCompile(`(?s)<style>.*?</style>`).ReplaceAllString(string(customer), "")
		for _, flag := range flags() {
			require.False(t, regexp.MustCompile(`(^|[\s(>`+"`"+`])`+regexp.QuoteMeta(flag)+`\b`).MatchString(text), "the customer's report names the option %s", flag)
		}
		task := regexp.MustCompile(`(?i)data-task=|\btasks?\s+\d|phases and tasks`)
		require.True(t, task.Match(full), "the full report names its tasks (else the check below could not fail)")
		require.False(t, task.Match(customer), "the customer's report names a task: %q", task.Find(customer))

		for _, version := range []string{"customer", "full"} {
			for _, p := range papers() {
				printFits(ctx, t, toppm, files[version], p, filepath.Join(out, fmt.Sprintf("50-report-%s-%s-%s", engine, version, p.name)))
			}
		}

		// The run page offers both, each named, each the command line's file.
		srv := serve(t, addr)
		do(ctx, t, chromedp.Navigate(srv.URL()), chromedp.WaitVisible(chromedp.CSS("table.runs")),
			chromedp.Navigate("http://"+srv.Addr()+"/runs/2"), chromedp.WaitVisible(chromedp.CSS("#report-customer")))
		require.Equal(t, "Download full report", textOf(ctx, t, "#report-full"))
		require.Equal(t, "Download customer report", textOf(ctx, t, "#report-customer"))
		shoot(ctx, t, out, "50-report-"+engine+"-run-page")
		for _, d := range []struct{ sel, version, name string }{
			{"#report-full", "full", "crmimport-run-2-full-report.html"},
			{"#report-customer", "customer", "migration-report-run-2.html"},
		} {
			got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`fetch(document.querySelector(`+"`"+d.sel+"`"+`).href).then(async r =>
				[r.headers.get("Content-Disposition") || "", await r.text()])`, chromedp.EvalAwaitPromise))
			require.NoError(t, err)
			require.Equal(t, `attachment; filename="`+d.name+`"`, got[0])
			want, err := os.ReadFile(files[d.version])
			require.NoError(t, err)
			require.Equal(t, string(want), got[1], "the page's %s download is `report --format html --for %s`", d.version, d.version)
		}
	})
}

// leak is what the customer's report must not hold, and whether the full
// one does (where it does, the check can be seen to fail).
type leak struct {
	s      string
	inFull bool
}

// leaks are what the customer's report must not hold, each by what it
// is: the database's address, the exports' folders (run 2 read the
// second), the machine's temp dir, the run's log lines.
func leaks(t *testing.T, addr, first, second string) map[string]leak {
	t.Helper()
	out := map[string]leak{"the database": {addr, false}, "the temp dir": {os.TempDir(), true},
		"the first export's folder": {first, false}, "the second export's folder": {second, true}}
	for i, line := range query(t, addr, `SELECT message FROM run_log WHERE migration_id = 2 ORDER BY id`) {
		out[fmt.Sprintf("log line %d", i+1)] = leak{html.EscapeString(line), true}
	}
	return out
}

// commands are the command line's commands, and flags its options, as
// the app declares them: a command added later is checked too.
func commands() []string {
	var out []string
	for _, c := range newApp(io.Discard, io.Discard, os.Getenv).cli().Commands {
		out = append(out, c.Name)
		out = append(out, c.Aliases...)
	}
	return out
}

func flags() []string {
	app := newApp(io.Discard, io.Discard, os.Getenv).cli()
	seen := map[string]bool{}
	var out []string
	add := func(names []string) {
		for _, n := range names {
			if len(n) > 1 && !seen[n] {
				seen[n] = true
				out = append(out, "--"+n)
			}
		}
	}
	for _, f := range app.Flags {
		add(f.Names())
	}
	var walk func(cmds []*cli.Command)
	walk = func(cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				add(f.Names())
			}
			walk(c.Subcommands)
		}
	}
	walk(app.Commands)
	sort.Strings(out)
	return out
}

// printFits loads the report file in Chromium and checks it on paper p:
// with print media at p's content width, no table is wider than the page
// and no element scrolls (a scrollbar would print, and what it hides
// would not); printed to PDF on p, each page's image has nothing in the
// right margin, and wherever the four outcome colours meet on a line they
// come in their order. The pages' images are kept as shot-N.png.
func printFits(ctx context.Context, t *testing.T, toppm, file string, p paper, shot string) {
	t.Helper()
	do(ctx, t, chromedp.Navigate("file://"+file), chromedp.WaitVisible(chromedp.CSS("table.outcomes")))
	_, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		if _, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
			return chromedp.Void{}, err
		}
		return chromedp.Void{}, nil
	})
	require.NoError(t, err)
	do(ctx, t, chromedp.EmulateViewport(p.contentWidth, p.contentHeight, chromedp.EmulatePortrait))
	problems, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const w = document.documentElement.clientWidth, out = [];
		if (!matchMedia("print").matches) out.push("not in print media");
		if (document.documentElement.scrollWidth > w) out.push("the page is " + document.documentElement.scrollWidth + "px wide, not " + w);
		const name = e => e.tagName.toLowerCase() + (e.className ? "." + String(e.className).trim().replace(/\s+/g, ".") : "") +
			(e.closest("section") ? " in " + (e.closest("section").querySelector("h2") || {textContent: "?"}).textContent : "");
		for (const t of document.querySelectorAll("table")) {
			const r = t.getBoundingClientRect();
			if (t.scrollWidth > w || r.right > w + 0.5 || r.left < -0.5) out.push(name(t) + ": " + t.scrollWidth + "px wide from " + r.left + " to " + r.right + " in " + w);
		}
		for (const tr of document.querySelectorAll("tr")) {
			if (getComputedStyle(tr).breakInside !== "avoid") { out.push(name(tr) + " may be cut in two by a page break"); break; }
		}
		for (const e of document.querySelectorAll("body *")) {
			const s = getComputedStyle(e);
			if (/auto|scroll/.test(s.overflowX + " " + s.overflowY)) out.push(name(e) + " scrolls (overflow " + s.overflowX + " " + s.overflowY + ")");
			const r = e.getBoundingClientRect();
			if (r.width > 0 && r.right > w + 0.5) out.push(name(e) + " ends at " + r.right + " past " + w);
		}
		return out.slice(0, 20); })()`))
	require.NoError(t, err)
	if len(problems) > 0 {
		shoot(ctx, t, filepath.Dir(shot), filepath.Base(shot)+"-print-media") // what was wrong, to look at
	}
	require.Empty(t, problems, "%s in print media at %s's content width (%d px)", filepath.Base(file), p.name, p.contentWidth)
	_, err = chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		if _, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{}); err != nil {
			return chromedp.Void{}, err
		}
		_, err := cdp.Call(ctx, tg, emulation.ClearDeviceMetricsOverride, cdp.Empty{})
		return chromedp.Void{}, err
	})
	require.NoError(t, err)

	pdf, err := chromedp.Run(ctx, chromedp.PrintToPDF(chromedp.PDFPaper(p.size)))
	require.NoError(t, err)
	pdfFile := filepath.Join(t.TempDir(), "report.pdf")
	require.NoError(t, os.WriteFile(pdfFile, pdf, 0o600))
	const dpi = 72
	prefix := filepath.Join(t.TempDir(), "page")
	outb, err := exec.Command(toppm, "-r", fmt.Sprint(dpi), "-png", pdfFile, prefix).CombinedOutput()
	require.NoError(t, err, "pdftoppm: %s", outb)
	pages, err := filepath.Glob(prefix + "-*.png")
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	sort.Strings(pages)
	ordered := 0
	for i, page := range pages {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(fmt.Sprintf("%s-p%d.png", shot, i+1), b, 0o600))
		img, err := png.Decode(bytes.NewReader(b))
		require.NoError(t, err)
		g := classify(img)
		where := fmt.Sprintf("%s on %s, page %d", filepath.Base(file), p.name, i+1)
		require.InDelta(t, p.widthMM*dpi/25.4, float64(g.w), 2, "%s: the page is %s wide", where, p.name)
		// The right margin, less 2 mm for a glyph's overhang: a table cut
		// at the page's edge, or run into the margin, leaves ink there.
		band := g.w - int((p.marginMM-2)*dpi/25.4)
		ink := 0
		for y := range g.h {
			for x := range g.w {
				if g.at(x, y) != paperWhite {
					ink++
					require.Less(t, x, band, "%s: ink at x=%d, y=%d, in the right margin (from x=%d): a table runs off the page", where, x, y, band)
				}
			}
			ordered += g.colourOrder(t, y, where)
		}
		require.NotZero(t, ink, "%s is blank", where)
		// Chromium shrinks a page whose layout is wider than the paper
		// (up to a third) before it cuts it: a bar printed shorter than
		// its 18 CSS px says the page did not fit.
		if h := g.barHeight(); h > 0 { // a page with a bar, or a swatch beside one
			require.InDelta(t, 18.0*dpi/96, float64(h), 1.5, "%s: the bars are %d px high, not 18 CSS px: the page was shrunk to fit something wider than the paper", where, h)
		}
	}
	require.NotZero(t, ordered, "%s on %s: a bar shows the four outcome colours", filepath.Base(file), p.name)
}

// outcomeColours are the four outcomes' colours (app.css, render.go), in
// their order.
var outcomeColours = []color.RGBA{{0x2e, 0x7d, 0x32, 0xff}, {0x54, 0x6e, 0x7a, 0xff}, {0xb2, 0x6a, 0x00, 0xff}, {0xc6, 0x28, 0x28, 0xff}}

// A page's pixels, classified once: paper, other ink, or one of the
// outcome colours (its index in outcomeColours).
const (
	paperWhite = -2
	otherInk   = -1
)

type pageGrid struct {
	w, h int
	c    []int8
}

func (g pageGrid) at(x, y int) int8 { return g.c[y*g.w+x] }

func classify(img image.Image) pageGrid {
	b := img.Bounds()
	g := pageGrid{w: b.Dx(), h: b.Dy(), c: make([]int8, b.Dx()*b.Dy())}
	for y := range g.h {
		for x := range g.w {
			r, gr, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			r, gr, bl = r>>8, gr>>8, bl>>8
			k := int8(otherInk)
			if r > 0xf0 && gr > 0xf0 && bl > 0xf0 {
				k = paperWhite
			}
			for i, o := range outcomeColours {
				if near(r, o.R) && near(gr, o.G) && near(bl, o.B) {
					k = int8(i)
				}
			}
			g.c[y*g.w+x] = k
		}
	}
	return g
}

// colourOrder checks line y of a page: where all four outcome colours are
// on it, each begins after the one before (imported, unchanged, skipped,
// failed). It returns 1 for such a line, else 0. A colour counts where it
// fills a few pixels in a row (a bar's part, a legend's swatch), not on
// the edge of a glyph, which smoothing tints.
func (g pageGrid) colourOrder(t *testing.T, y int, where string) int {
	t.Helper()
	const solid = 3
	first := []int{-1, -1, -1, -1}
	run, of := 0, int8(otherInk)
	for x := range g.w {
		k := g.at(x, y)
		if k != of {
			run, of = 0, k
		}
		if run++; k >= 0 && run == solid && first[k] < 0 {
			first[k] = x - solid + 1
		}
	}
	for _, x := range first {
		if x < 0 {
			return 0
		}
	}
	require.True(t, first[0] < first[1] && first[1] < first[2] && first[2] < first[3],
		"%s, line %d: the outcome colours begin at x=%v, not in the order imported, unchanged, skipped, failed", where, y, first)
	return 1
}

// barHeight is the tallest block of one outcome colour on a page, at
// least 6 px wide (a glyph of a coloured header is narrower): a bar's
// height (a legend's swatch is shorter), 0 for a page with none.
func (g pageGrid) barHeight() int {
	const wide = 6
	tallest := 0
	for x := 0; x+wide <= g.w; x++ {
		run, of := 0, int8(otherInk)
		for y := range g.h {
			k := g.at(x, y)
			for dx := 1; dx < wide && k >= 0; dx++ {
				if g.at(x+dx, y) != k {
					k = otherInk
				}
			}
			switch {
			case k < 0:
				run, of = 0, otherInk
			case k == of:
				run++
			default:
				run, of = 1, k
			}
			tallest = max(tallest, run)
		}
	}
	return tallest
}

func near(v uint32, c uint8) bool { return v+12 >= uint32(c) && v <= uint32(c)+12 }

// TestReportForRefusals (issue 27 item 5): --for names a version of the
// HTML report; with another format, or a version that does not exist,
// report refuses (exit 2) and says what to write instead.
func TestReportForRefusals(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crm.db")
	r := crm(t, nil, "--db", path, "--quiet", "run", "--tenant", "acme", "--source", "canonical", demo)
	require.Equal(t, exitPartial, r.code, r.stderr)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "1", "--for", "customer"}, "--for customer: only the HTML report has versions; add --format html (the text report is the full one)"},
		{[]string{"report", "1", "--format", "json", "--for", "full"}, "--for full: only the HTML report has versions; add --format html"},
		{[]string{"--json", "report", "1", "--for", "customer"}, "--for customer: only the HTML report has versions; add --format html (the json report is the full one)"},
		{[]string{"report", "1", "--format", "html", "--for", "boss"}, `--for "boss": use full or customer`},
	} {
		r := crm(t, nil, append([]string{"--db", path}, c.args...)...)
		require.Equal(t, exitUsage, r.code, "%v: %s", c.args, r.stderr)
		require.Contains(t, r.stdout+r.stderr, c.want, "%v", c.args)
	}
	r = crm(t, nil, "--db", path, "--json", "report", "1", "--format", "html", "--for", "customer", "--out", filepath.Join(t.TempDir(), "r.html"))
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, `"for": "customer"`)
}
