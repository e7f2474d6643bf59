package desktop

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"io/fs"

	"crmimport/report"
)

// WriteReport writes the run page as one self-contained HTML file (`report
// RUN --format html`, and the page's Download report): the run page's own
// template with its style inline and its SVG bars, no script, no
// navigation, and nothing that loads a resource from anywhere — a
// consultant mails it to the customer. Data from the export is text.
func WriteReport(w io.Writer, r *report.Report) error {
	fsys, err := assetsFS("")
	if err != nil {
		return err
	}
	return writeReport(w, fsys, r)
}

func writeReport(w io.Writer, fsys fs.FS, r *report.Report) error {
	t, err := parseTemplates(fsys, "run")
	if err != nil {
		return err
	}
	css, err := fs.ReadFile(fsys, "static/app.css")
	if err != nil {
		return err
	}
	v := newRunView(r)
	p := page{Title: fmt.Sprintf("Run %d · tenant %s", r.Run.ID, r.Run.Tenant), Static: true, Style: template.CSS(css), Data: v}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout", p); err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}
