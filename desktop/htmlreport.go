package desktop

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"io/fs"

	"crmimport/report"
)

// Audience is whom an HTML report is written for (issue 27 item 5).
type Audience string

const (
	// ForFull is the run page whole: phases and tasks, files, what next
	// with its commands, the log — the consultant's own record.
	ForFull Audience = "full"
	// ForCustomer is what was migrated, per kind, and what needs the
	// customer's action, in plain words: no log, no path of this machine,
	// no task, no command, no id of the run's own beyond its number
	// (report/customer.go says what it tells).
	ForCustomer Audience = "customer"
)

// Audiences are the versions of the HTML report, the default first.
func Audiences() []Audience { return []Audience{ForFull, ForCustomer} }

// ParseAudience reads a version's name ("full", "customer").
func ParseAudience(s string) (Audience, error) {
	for _, a := range Audiences() {
		if string(a) == s {
			return a, nil
		}
	}
	return "", fmt.Errorf("no report for %q: use full or customer", s)
}

// WriteReport writes the run page as one self-contained HTML file (`report
// RUN --format html`, and the page's Download report): the run page's own
// template with its style inline and its SVG bars, no script, no
// navigation, and nothing that loads a resource from anywhere — a
// consultant mails it to the customer. Data from the export is text. The
// customer's version is a template of its own (customer.tmpl) over the
// same report, so that what it leaves out is never in the file, hidden
// or not.
func WriteReport(w io.Writer, r *report.Report, a Audience) error {
	fsys, err := assetsFS("")
	if err != nil {
		return err
	}
	return writeReport(w, fsys, r, a)
}

func writeReport(w io.Writer, fsys fs.FS, r *report.Report, a Audience) error {
	name, title := "run", fmt.Sprintf("Run %d · tenant %s", r.Run.ID, r.Run.Tenant)
	var data any = newRunView(r)
	switch a {
	case ForFull:
	case ForCustomer:
		name, title = "customer", fmt.Sprintf("Migration report · %s · run %d", r.Run.Tenant, r.Run.ID)
		data = r
	default:
		return fmt.Errorf("no report for %q", a)
	}
	t, err := parseTemplates(fsys, name)
	if err != nil {
		return err
	}
	css, err := fs.ReadFile(fsys, "static/app.css")
	if err != nil {
		return err
	}
	p := page{Title: title, Static: true, Style: template.CSS(css), Data: data}
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout", p); err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}
