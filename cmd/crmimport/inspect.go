package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"crmimport/bytesize"
	"crmimport/canon"
	"crmimport/importer/input"
	"crmimport/importer/profile"
	"crmimport/importer/reader"
	"crmimport/ledger"
	"crmimport/runs"
	"crmimport/store"
	"crmimport/visible"
)

// exitProblems: inspect found a file whose task would fail (a run would
// start, and end partial or failed): 3, as a partial run and doctor's
// findings. 1 stays what a run that would be refused gives.
const exitProblems = 3

func (a *app) inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "show what a run of PATH would plan and find, writing to no database",
		ArgsUsage: "PATH [PATH…]",
		Description: `Reads the export as run would plan it, and writes nothing anywhere: without
--tenant it opens no database (--db is not read, nor made). It shows

  - the plan: each file, the kind it holds and its phase, its format, size,
    encoding and fingerprint; each file or folder left out, and why; what
    planning would say (notices, and warnings such as a file read as
    Windows-1252);
  - per file: how it is read (the encoding and the evidence for it, or
    --encoding; the delimiter), the links of its kind (link fields and their
    parent kinds, ids by prefix), the side files its task reads, what each
    column gives (a canonical field, or extra; the alternates, lists and links
    it feeds), and its first rows as they would be mapped — their values
    after the profile's rules, what stays in extra, and what a run would make
    of them as far as the row decides (failed or skipped with the reason, or
    valid: the ledger decides the rest);
  - with --tenant, what each of those rows is to the tenant's ledger in --db
    (opened read-only, never made): new, unchanged,
    outdated (the fields changed at the source since import: run --update
    would update it), in conflict (its row was also edited by hand since),
    or deleted in the source since — as a run of the same export decides it;
  - every problem a run would find before its first record: each file whose
    task would fail (no id column, not CSV, a broken header), and what would
    refuse the run altogether (no file matches, a zip bomb, a named pipe).

Exit code 0 when a run would start and every file opens; 3 when a run would
start but a file's task would fail (as a partial run); 1 when the run would
be refused (as run); 2 for a usage error.

Examples:
   crmimport inspect --source canonical ./export
   crmimport inspect --source canonical --tenant acme ./cutover-export
   crmimport inspect --source salesforce WE_00D5g000001_1.ZIP WE_00D5g000001_2.ZIP
   crmimport inspect --source zoho --profile zoho.yaml --rows 10 ./zoho-export.zip
   crmimport inspect --source canonical --only notes,activities --encoding windows-1252 ./export
   crmimport --json inspect --source hubspot ./hubspot-exports`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "source", Usage: "the source name, as run takes it: canonical, salesforce, hubspot, pipedrive, or your own (required)"},
			&cli.StringFlag{Name: "tenant", Usage: "compare the rows shown with this tenant's ledger in --db, read-only: new, unchanged, outdated, in conflict (R17)"},
			&cli.StringFlag{Name: "profile", Usage: "the file layout: a built-in profile's name or a profile file (default: the built-in profile named like --source)"},
			&cli.StringFlag{Name: "only", Usage: "only these kinds, comma-separated (" + pluralKinds() + ")"},
			&cli.StringFlag{Name: "encoding", Usage: "read every file in this encoding (default: each file's own, on the evidence of its bytes)"},
			&cli.IntFlag{Name: "rows", Value: runs.DefaultInspectRows, Usage: fmt.Sprintf("how many rows of each file to map (1 to %d)", runs.MaxInspectRows)},
		},
		Action: a.inspectAction,
	}
}

func (a *app) inspectAction(c *cli.Context) error {
	if err := checkPaths(c); err != nil {
		return err
	}
	spec := runs.InspectSpec{Source: strings.TrimSpace(c.String("source")), Profile: c.String("profile"),
		Input: c.Args().First(), Inputs: c.Args().Tail(), Encoding: c.String("encoding"), Rows: c.Int("rows")}
	switch {
	case spec.Source == "":
		return usagef("inspect needs --source (the source name, e.g. canonical)")
	case spec.Rows < 1 || spec.Rows > runs.MaxInspectRows:
		return usagef("--rows must be between 1 and %d, got %d", runs.MaxInspectRows, spec.Rows)
	}
	only, err := parseOnly(c.String("only"))
	if err != nil {
		return err
	}
	spec.Only = only
	ctx, stop := a.stopOnSignal(c.Context, func() int64 { return 0 })
	defer stop()
	closeLedger, err := a.inspectLedger(ctx, &spec, strings.TrimSpace(c.String("tenant")))
	if err != nil {
		return err
	}
	defer closeLedger()
	ins, err := runs.Inspect(ctx, spec)
	if err != nil {
		if ctx.Err() != nil {
			return stopped("inspecting the export's files")
		}
		return err
	}
	if a.json {
		err = a.writeJSON(ins)
	} else {
		writeInspection(a.stdout, ins)
	}
	if err == nil && len(ins.Problems) > 0 {
		return exitWith(exitProblems)
	}
	return err
}

// inspectLedger gives spec the tenant's ledger to compare the rows with
// (R17), opened read-only: inspect writes to no database. An absent
// database is not made: it holds no slot to compare with.
func (a *app) inspectLedger(ctx context.Context, spec *runs.InspectSpec, tenant string) (func(), error) {
	if tenant == "" {
		return func() {}, nil
	}
	spec.Tenant = tenant
	db, err := store.OpenReader(ctx, a.dbPath)
	switch {
	case errors.Is(err, store.ErrNoDatabase):
		a.note("no database at %s: nothing is imported there yet, so the rows are not compared with a ledger", store.Name(a.dbPath))
		return func() {}, nil
	case err != nil:
		return nil, err
	}
	spec.Ledger = db
	return func() { _ = db.Close() }, nil // read-only: nothing to lose
}

// checkPaths refuses a command line without PATH, or with an empty one
// (an unset "$EXPORT"), for the commands that read an export.
func checkPaths(c *cli.Context) error {
	name := c.Command.Name
	if c.NArg() < 1 {
		return usagef("%s takes one PATH (a folder, a zip or one file; or the several zips of one export), got none", name)
	}
	for _, p := range c.Args().Slice() {
		if strings.TrimSpace(p) == "" {
			return usagef("%s: PATH is empty (an unset variable, such as \"$EXPORT\"?): give the folder, zip or file to import", name)
		}
	}
	return nil
}

// parseOnly reads --only: kinds, comma-separated, singular or plural.
func parseOnly(only string) ([]ledger.Kind, error) {
	if only == "" {
		return nil, nil
	}
	var kinds []ledger.Kind
	for _, w := range strings.Split(only, ",") {
		k, err := canon.ParseKind(w)
		if err != nil {
			return nil, usagef("--only: %v", err)
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}

// writeInspection writes an inspection for a person: the plan, then each
// file (how it is read, its links, its columns, its first rows), then the
// problems. Text from the export is written visibly (visible.String), and
// w escapes it again, which changes nothing.
func writeInspection(w io.Writer, ins runs.Inspection) {
	prof := ins.Profile
	if ins.ProfileFile != "" {
		prof += " (" + ins.ProfileFile + ")"
	}
	fmt.Fprintf(w, "inspect · source %s · profile %s · %d %s planned · nothing written\n", ins.Source, prof,
		len(ins.Files), reader.Plural(len(ins.Files), "task", "tasks"))
	fmt.Fprintf(w, "export: %s\n", strings.Join(ins.Inputs, ", "))
	if len(ins.Only) > 0 {
		fmt.Fprintf(w, "only: %s\n", strings.Join(ins.Only, ", "))
	}
	if ins.Encoding != "" {
		fmt.Fprintf(w, "encoding: %s (--encoding)\n", ins.Encoding)
	}
	if ins.Tenant != "" {
		fmt.Fprintf(w, "ledger of tenant %s: %s\n", ins.Tenant, ledgerTally(ins.Ledger))
	}

	fmt.Fprintln(w, "\nPlan:")
	rows := [][]string{{"phase", "kind", "file", "format", "encoding", "size", "fingerprint"}}
	for _, f := range ins.Files {
		rows = append(rows, []string{strconv.Itoa(f.Phase), f.Kind.Plural(), visible.String(f.Name), string(f.Format), f.Encoding,
			bytesize.Format(f.Size), f.Fingerprint})
	}
	writeTable(w, "  ", rows)
	if len(ins.SideFiles) > 0 {
		fmt.Fprintln(w, "\nRead beside them:")
		rows = nil
		for _, s := range ins.SideFiles {
			rows = append(rows, []string{visible.String(sideName(s)), s.Role, s.Fingerprint})
		}
		writeTable(w, "  ", rows)
	}
	if len(ins.LeftOut) > 0 {
		fmt.Fprintln(w, "\nLeft out:")
		rows = nil
		for _, l := range ins.LeftOut {
			rows = append(rows, []string{visible.String(l.Name), l.Reason})
		}
		writeTable(w, "  ", rows)
	}
	if len(ins.Notices)+len(ins.Warnings) > 0 {
		fmt.Fprintln(w)
	}
	for _, n := range ins.Notices {
		fmt.Fprintf(w, "notice: %s\n", n)
	}
	for _, n := range ins.Warnings {
		fmt.Fprintf(w, "warning: %s\n", n)
	}

	for _, f := range ins.Files {
		writeFileInspection(w, f)
	}

	if len(ins.Problems) == 0 {
		fmt.Fprintln(w, "\nProblems: none — a run would start, and every task would open its file.")
		return
	}
	fmt.Fprintf(w, "\nProblems: %d %s would fail (the run would end partial or failed; exit %d):\n", len(ins.Problems),
		reader.Plural(len(ins.Problems), "task", "tasks"), exitProblems)
	for _, p := range ins.Problems {
		fmt.Fprintf(w, "  - %s (%s): %s\n", p.File, p.Kind.Plural(), p.Error)
	}
}

func writeFileInspection(w io.Writer, f runs.FileInspection) {
	fmt.Fprintf(w, "\n%s — %s, phase %d\n", visible.String(f.Name), f.Kind.Plural(), f.Phase)
	how := []string{string(f.Format)}
	if f.Delimiter != "" {
		how = append(how, "delimiter "+strconv.Quote(f.Delimiter))
	}
	how = append(how, bytesize.Format(f.Size), f.Fingerprint)
	fmt.Fprintf(w, "  read as: %s\n", strings.Join(how, ", "))
	if f.Encoding == "" {
		fmt.Fprintf(w, "  encoding: %s\n", f.EncodingWhy) // a workbook's
	} else {
		fmt.Fprintf(w, "  encoding: %s — %s\n", f.Encoding, f.EncodingWhy)
	}
	for _, l := range f.Links {
		fmt.Fprintf(w, "  link: %s\n", describeLink(l))
	}
	for _, s := range f.SideFiles {
		fmt.Fprintf(w, "  reads beside it: %s (%s)\n", visible.String(sideName(s)), s.Role)
	}
	if f.Problem != "" {
		fmt.Fprintf(w, "  PROBLEM: its task would fail: %s\n", f.Problem)
	}
	if len(f.Columns) > 0 {
		fmt.Fprintln(w, "  Columns:")
		rows := [][]string{{"column", "gives", ""}}
		for _, c := range f.Columns {
			gives := c.Field
			if gives == "" {
				gives = "a link"
			}
			rows = append(rows, []string{visible.String(c.Name), "→ " + gives, columnNotes(c)})
		}
		writeTable(w, "    ", rows)
	}
	if len(f.Rows) == 0 {
		if f.Problem == "" {
			fmt.Fprintln(w, "  Rows: none (the file holds no record)")
		}
		return
	}
	fmt.Fprintf(w, "  First %d %s, as they would be mapped:\n", len(f.Rows), reader.Plural(len(f.Rows), "row", "rows"))
	for _, r := range f.Rows {
		writeRowInspection(w, f.Kind, r)
	}
}

// writeRowInspection writes one row of a file as a run would map it: its
// line, id and outcome, its fields, its links and its extra columns.
func writeRowInspection(w io.Writer, kind ledger.Kind, r runs.RowInspection) {
	outcome := r.Outcome
	if r.Reason != "" {
		outcome += ": " + r.Reason
	}
	id := r.ID
	if id == "" {
		id = "(no id)"
	}
	if r.Ledger != "" {
		outcome += " · " + ledgerWord(r)
	}
	fmt.Fprintf(w, "    line %d · %s · %s\n", r.Line, quote(id), outcome)
	var vals []string
	for _, field := range canon.Fields(kind) {
		if v, ok := r.Fields[field]; ok && field != "id" {
			vals = append(vals, field+" "+quote(v))
		}
	}
	if len(vals) > 0 {
		fmt.Fprintf(w, "      %s\n", strings.Join(vals, " · "))
	}
	for _, l := range r.Links {
		to := "unresolved"
		if l.ID != "" {
			to = l.Field + " " + quote(l.ID)
		}
		fmt.Fprintf(w, "      link %s %s → %s\n", visible.String(l.Column), quote(l.Value), to)
	}
	if len(r.Extra) > 0 {
		keys := make([]string, 0, len(r.Extra))
		for k := range r.Extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var extra []string
		for _, k := range keys {
			v, ok := r.Extra[k].(string)
			if !ok {
				v = fmt.Sprint(r.Extra[k]) // a JSON value, as the export wrote it
			}
			extra = append(extra, quote(k)+" "+quote(v))
		}
		fmt.Fprintf(w, "      extra: %s\n", strings.Join(extra, " · "))
	}
}

// ledgerOrder is the order ledgerTally names the ledger's words in.
var ledgerOrder = []string{runs.RowNew, runs.RowUnchanged, runs.RowOutdated, runs.RowConflict, runs.RowDeletedSince}

// ledgerTally says how many of the rows shown are new, unchanged, outdated,
// in conflict and deleted since, to the tenant's ledger (R17).
func ledgerTally(counts map[string]int) string {
	var parts []string
	for _, w := range ledgerOrder {
		if n := counts[w]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ReplaceAll(w, "_", " ")))
		}
	}
	if len(parts) == 0 {
		return "no row shown is a record to compare"
	}
	return "of the rows shown, " + strings.Join(parts, ", ")
}

// ledgerWord says what a row is to the tenant's ledger, with the fields
// that changed at the source and those edited by hand since import.
func ledgerWord(r runs.RowInspection) string {
	switch {
	case r.Ledger == runs.RowNew:
		return "new to the ledger"
	case r.Ledger == runs.RowOutdated && r.Applicable:
		return "outdated: " + strings.Join(r.Changed, ", ") + " changed at the source (run --update would update it)"
	case r.Ledger == runs.RowOutdated:
		return "outdated: " + strings.Join(r.Changed, ", ") + " changed at the source (run --update would not write it: " +
			"a row found, not made, or a record now invalid)"
	case r.Ledger == runs.RowConflict:
		return "conflict: " + strings.Join(r.Changed, ", ") + " changed at the source, " + strings.Join(r.Edited, ", ") +
			" edited by hand since import (left as it is unless --update=overwrite)"
	case r.Ledger == runs.RowDeletedSince:
		return "deleted in the source since import (left in place)"
	default:
		return "unchanged in the ledger"
	}
}

// writeTable writes rows aligned in columns, each line indented and
// without trailing blanks.
func writeTable(w io.Writer, indent string, rows [][]string) {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, indent+strings.Join(r, "\t"))
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			fmt.Fprintln(w, strings.TrimRight(line, " \n"))
		}
	}
}

// describeLink says what a link of a kind is, in a line: its columns, and
// what they link to.
func describeLink(l profile.Link) string {
	cols := make([]string, len(l.Columns))
	for i, c := range l.Columns {
		cols[i] = visible.String(c)
	}
	from := strings.Join(cols, " or ")
	if l.Join != "" {
		from += " of the joined file " + l.Join
	}
	return from + " " + linkTarget(l)
}

// linkTarget says what a link's values link to.
func linkTarget(l profile.Link) string {
	var to string
	switch {
	case len(l.Prefixes) > 0:
		var ps []string
		for _, p := range l.Prefixes {
			kind := "ignored"
			switch {
			case p.Kind != "":
				kind = p.Kind.Plural()
			case p.NotImported != "":
				kind = p.NotImported + ", not imported"
			}
			ps = append(ps, p.Prefix+"… "+kind)
		}
		to = "→ by id prefix: " + strings.Join(ps, ", ")
	case l.ByName:
		to = "→ " + l.Kind.Plural() + ", by the parent's name in the export"
	default:
		to = "→ " + l.Kind.Plural()
	}
	if l.List != "" {
		to += "; a list (" + listSep(l.List) + ")"
	}
	return to
}

// columnNotes says how a column feeds its field, beyond the field itself.
func columnNotes(c profile.Column) string {
	var notes []string
	if c.Alternates > 1 {
		notes = append(notes, fmt.Sprintf("alternate %d of %d: the first that holds a value", c.Alternate, c.Alternates))
	}
	if c.Multi != "" {
		notes = append(notes, fmt.Sprintf("several values (%s): the first gives it", listSep(c.Multi)))
	}
	if c.Link != nil {
		notes = append(notes, "link "+linkTarget(*c.Link))
	}
	if len(c.Where) > 0 {
		notes = append(notes, "only rows where it is "+strings.Join(c.Where, " or ")+" are records")
	}
	switch c.Outcome {
	case "won":
		notes = append(notes, "a flag: won when true")
	case "closed":
		notes = append(notes, "a flag: lost when true and the deal is not won; open when neither is")
	}
	if len(c.OtherKinds) > 0 {
		var kinds []string
		for _, k := range c.OtherKinds {
			kinds = append(kinds, k.Plural())
		}
		if c.OtherKindsTakeAll {
			notes = append(notes, strings.Join(kinds, " and ")+" map it: never kept in this kind's extra")
		} else {
			notes = append(notes, strings.Join(kinds, " and ")+" map it: kept in extra only for a row they do not take")
		}
	}
	if c.ExtraName != "" {
		notes = append(notes, "kept in extra as "+quote(c.ExtraName))
	}
	if len(c.IDFrom) > 0 {
		notes = append(notes, "part of the id (made of "+strings.Join(c.IDFrom, ", ")+"): an edit of it makes a new record")
	}
	return strings.Join(notes, "; ")
}

func listSep(sep string) string {
	if sep == "json" {
		return "a JSON array"
	}
	return "separated by " + strconv.Quote(sep)
}

// sideName is a side file's name as messages name it.
func sideName(s profile.SideFile) string { return input.Name(s.File) }

// quote writes a value from the export on one line: quoted, escaped, and
// cut after 60 characters.
func quote(s string) string {
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:60]) + "…"
	}
	return strconv.Quote(s)
}
