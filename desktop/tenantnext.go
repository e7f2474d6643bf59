package desktop

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"crmimport/forensics"
	"crmimport/ledger"
	"crmimport/report"
	"crmimport/runs"
)

// The next actions of a tenant's page (tenants.go): for each thing still
// open, what does it, as the engine would accept it now. Each button is one
// the run page or the Ledger page has too — Failed records, Retry (R8),
// Apply these changes (R17), doctor's repairs — so the two never disagree;
// one the engine would refuse is disabled and says why.

// nextActions are the actions of v's open records and runs, with doctor's
// repairs of the tenant (diag), in the order of urgency: runs left
// unfinished, broken records, doctor's findings, then the rest.
func (s *Server) nextActions(v *tenantView, diag *forensics.Diagnosis) []nextAction {
	t := &tenantNext{s: s, v: v, reps: map[int64]*report.Report{}}
	for _, tr := range v.State.Runs {
		t.reps[tr.Report.Run.ID] = tr.Report
	}
	doctor := t.doctor(diag)
	var out []nextAction
	out = append(out, t.retry()...)
	out = append(out, t.failed()...)
	out = append(out, doctor...)
	out = append(out, t.skipped()...)
	out = append(out, t.outdated()...)
	out = append(out, t.conflicts()...)
	out = append(out, t.links()...)
	// Whatever starts or resumes a run waits while one of the tenant's
	// works: one live run per tenant (R13).
	if v.Live != 0 {
		for i := range out {
			for j := range out[i].Buttons {
				b := &out[i].Buttons[j]
				if b.OK && (b.Post != "" || b.Form != nil || strings.HasPrefix(b.Href, "/import")) {
					b.OK, b.Why = false, fmt.Sprintf("run %d of this tenant is working: one run per tenant at a time (R13); "+
						"this is offered again once it has ended", v.Live)
				}
			}
		}
	}
	return out
}

// tenantNext is what the next actions are read from.
type tenantNext struct {
	s       *Server
	v       *tenantView
	reps    map[int64]*report.Report
	resumed map[int64]bool // runs a doctor's repair resumes: Retry does not offer them twice
}

// groups are the open groups of one word.
func (t *tenantNext) groups(word string) []ledger.OpenGroup {
	var out []ledger.OpenGroup
	for _, g := range t.v.State.Open {
		if g.What == word {
			out = append(out, g)
		}
	}
	return out
}

// byRun sums groups per run, in run order.
func byRun(gs []ledger.OpenGroup) (runs []int64, counts map[int64]int64) {
	counts = map[int64]int64{}
	for _, g := range gs {
		if _, ok := counts[g.Run]; !ok {
			runs = append(runs, g.Run)
		}
		counts[g.Run] += g.Count
	}
	slices.Sort(runs)
	return runs, counts
}

func total(gs []ledger.OpenGroup) int64 {
	var n int64
	for _, g := range gs {
		n += g.Count
	}
	return n
}

// records is "1 record", "12 records".
func records(n int64) string {
	return report.Count(n) + " " + plural(int(min(n, 2)), "record", "records")
}

// latestInput is the export the tenant's latest run of source read, and
// its profile: where a run over "the export" starts from.
func (t *tenantNext) latestInput(source string) (path, profile string) {
	for _, tr := range slices.Backward(t.v.State.Runs) {
		if tr.Report.Run.Source == source && tr.Input != "" && tr.Did != runs.DidFix {
			return tr.Input, tr.Profile
		}
	}
	return "", ""
}

// rearmable is how many tasks a resume of rep would re-arm (R8).
func rearmable(rep *report.Report) int {
	n := 0
	for _, tk := range rep.Tasks {
		if tk.Status == runs.TaskFailed || tk.Status == runs.TaskCancelled || tk.Status == runs.TaskRunning {
			n++
		}
	}
	return n
}

// retry offers Retry (R8, labelled as the run page labels it) for each run
// of the tenant left with tasks that failed or were stopped, and resume
// --from (R10) for such a run loaded from a dump.
func (t *tenantNext) retry() []nextAction {
	var buttons []button
	for _, tr := range t.v.State.Runs {
		rep := tr.Report
		if rep.Run.Undoes != 0 || rep.Run.UndoneBy != 0 || t.resumed[rep.Run.ID] || rearmable(rep) == 0 ||
			(rep.Run.Status == runs.RunRunning && !rep.Interrupted) {
			continue
		}
		if rep.Dump != "" {
			buttons = append(buttons, resumeFrom(rep.Run.ID))
			continue
		}
		_, resume := t.s.actions(rep)
		resume.Label = strings.Replace(resume.Label, " — ", fmt.Sprintf(" run %d — ", rep.Run.ID), 1)
		b := button{action: resume}
		if resume.OK {
			b.Post = fmt.Sprintf("/api/runs/%d/resume", rep.Run.ID)
		}
		buttons = append(buttons, b)
	}
	if len(buttons) == 0 {
		return nil
	}
	return []nextAction{{For: "retry", Title: "Runs left unfinished",
		Text: "Some of their tasks failed or were stopped: a retry re-arms them with their checkpoints, " +
			"and goes on where they stopped (R8); what they imported stays.", Buttons: buttons}}
}

// resumeFrom is `resume RUN --from PATH` for a run loaded from a dump,
// which has no files here (R10).
func resumeFrom(id int64) button {
	return button{action: action{Label: fmt.Sprintf("Resume run %d over this export", id), OK: true},
		Form: &runForm{Do: forensics.DoResume, Run: id}}
}

// failed offers, per run whose failures are open, its Failed records
// page, where the rows are corrected and re-imported (SPEC §9).
func (t *tenantNext) failed() []nextAction {
	gs := t.groups(ledger.OpenFailed)
	if len(gs) == 0 {
		return nil
	}
	ids, counts := byRun(gs)
	a := nextAction{For: ledger.OpenFailed, Title: records(total(gs)) + " failed",
		Text: "Their latest attempt failed and no run has imported them since. Correct the rows on the Failed records " +
			"page of the run that failed them and re-import them: nothing already imported is touched (R2–R4)."}
	for _, id := range ids {
		b := button{action: action{Label: fmt.Sprintf("Correct the %s of run %d", records(counts[id]), id), OK: true,
			Href: fmt.Sprintf("/runs/%d/failed", id)}}
		if rep := t.reps[id]; rep != nil && rep.Dump != "" && rep.FailedRows == 0 {
			b.OK, b.Why = false, fmt.Sprintf("run %d was loaded from a dump, which carries no failed rows: the rows are in the export "+
				"it read where it ran", id)
		}
		a.Buttons = append(a.Buttons, b)
	}
	if !slices.ContainsFunc(t.v.State.Runs, func(tr runs.TenantRun) bool { return rearmable(tr.Report) > 0 && tr.Report.Run.UndoneBy == 0 }) {
		a.Buttons = append(a.Buttons, button{action: action{Label: "Retry", Why: "no task of this tenant's runs failed or was stopped: " +
			"each of these records failed on its own row (R4), and a retry would read it again as it is — correct the rows first"}})
	}
	return []nextAction{a}
}

// doctor gives each of doctor's findings of the tenant as a next action:
// its repairs as commands, and as buttons where the page can do one
// itself (forensics.Action): a run of kinds over an export, a resume.
func (t *tenantNext) doctor(diag *forensics.Diagnosis) []nextAction {
	t.resumed = map[int64]bool{}
	var out []nextAction
	for _, f := range diag.Findings {
		if f.Tenant != t.v.Tenant {
			continue
		}
		a := nextAction{For: "doctor", Title: fmt.Sprintf("Doctor: %s (%s)", f.Name, f.Rule),
			Text:    fmt.Sprintf("%s %s: %s.", report.Count(f.Count), f.Unit, f.Summary),
			Command: strings.Join(f.Repair, "\n")}
		if len(f.Details) > 0 {
			a.Text += " " + strings.Join(f.Details, "; ") + "."
		}
		for _, act := range f.Actions {
			switch act.Do {
			case forensics.DoResume:
				t.resumed[act.Run] = true
				if act.From {
					a.Buttons = append(a.Buttons, resumeFrom(act.Run))
					continue
				}
				a.Buttons = append(a.Buttons, button{action: action{Label: fmt.Sprintf("Resume run %d", act.Run), OK: true},
					Post: fmt.Sprintf("/api/runs/%d/resume", act.Run)})
			case forensics.DoRun:
				path, prof := t.latestInput(act.Source)
				if act.Profile != "" && prof == "" {
					prof = act.Profile
				}
				a.Buttons = append(a.Buttons, button{action: action{Label: "Run " + strings.Join(act.Only, ", ") + " over this export", OK: true},
					Form: &runForm{Do: forensics.DoRun, Path: path, Tenant: act.Tenant, Source: act.Source, Profile: prof,
						Only: strings.Join(act.Only, ",")}})
			}
		}
		out = append(out, a)
	}
	return out
}

// skipped tells the skips still open, with each run's Skipped page (what
// each waits for); those whose parents have arrived are doctor's
// ready-to-take-over, whose repair runs them.
func (t *tenantNext) skipped() []nextAction {
	gs := t.groups(ledger.OpenSkipped)
	if len(gs) == 0 {
		return nil
	}
	ids, counts := byRun(gs)
	a := nextAction{For: ledger.OpenSkipped, Title: records(total(gs)) + " skipped",
		Text: "A skip is a placeholder, not a verdict (R3): a run of their kind takes them over once what they wait for is " +
			"imported. Each run's Skipped page says what each one waits for."}
	for _, id := range ids {
		if id == 0 {
			continue // a skip a dump brought without its run: no page of a run holds it
		}
		a.Buttons = append(a.Buttons, button{action: action{Label: fmt.Sprintf("See the %s skipped by run %d", records(counts[id]), id),
			OK: true, Href: fmt.Sprintf("/runs/%d/skipped", id)}})
	}
	return []nextAction{a}
}

// outdated offers Apply these changes (update.go) for the run that found
// the most recent of them.
func (t *tenantNext) outdated() []nextAction {
	gs := t.groups(ledger.OpenOutdated)
	if len(gs) == 0 {
		return nil
	}
	a := nextAction{For: ledger.OpenOutdated, Title: records(total(gs)) + " outdated",
		Text: "They changed at the source since they were imported, and nothing was written (R17). Apply these changes " +
			"opens New import with the run's export and --update: its dry run shows what would be written."}
	applicable := map[int64]int64{}
	var ids []int64
	var matched int64
	for _, g := range gs {
		if g.Applicable > 0 && applicable[g.Run] == 0 {
			ids = append(ids, g.Run)
		}
		applicable[g.Run] += g.Applicable
		matched += g.Count - g.Applicable
	}
	slices.Sort(ids)
	if len(ids) > 0 {
		id := ids[len(ids)-1] // the latest reading of the export holds the changes as they are now
		rep := t.reps[id]
		opts, err := runs.OptionsOf(rep.Run)
		b := button{action: action{Label: "Apply these changes", Why: fmt.Sprintf("run %d's options cannot be read: %v", id, err)}}
		if err == nil {
			var n int64
			for _, k := range ids {
				n += applicable[k]
			}
			b.action = applyOf(rep, opts, n, false)
		}
		a.Buttons = append(a.Buttons, b)
	}
	if matched > 0 {
		a.Text += fmt.Sprintf(" %s matched an existing row, which was found, not made (R5): --update never writes it.", records(matched))
		if len(ids) == 0 {
			a.Buttons = append(a.Buttons, button{action: action{Label: "Apply these changes",
				Why: "every one of them matched an existing row, which was found, not made (R5): no run writes it"}})
		}
	}
	return []nextAction{a}
}

// conflicts tell the changes that meet a hand edit: the page never writes
// over one (R17); the command that does is given, to run after checking.
func (t *tenantNext) conflicts() []nextAction {
	gs := t.groups(ledger.OpenConflict)
	if len(gs) == 0 {
		return nil
	}
	a := nextAction{For: ledger.OpenConflict, Title: records(total(gs)) + " in conflict",
		Text: "They changed at the source, and their row was edited by hand since it was imported: an update leaves them as " +
			"they are (R17). Check each edit in the records; to write the source's values over them, run the command below.",
		Buttons: []button{{action: action{Label: "Overwrite the edits",
			Why: "the page never writes over a row edited by hand: check the edits first, then run the command below (--update=overwrite)"}}}}
	var cmds []string
	for _, src := range sourcesOf(gs) {
		path, _ := t.latestInput(src)
		if path == "" {
			path = "PATH"
		} else {
			path = report.ShellCommand(path)
		}
		cmds = append(cmds, report.ShellCommand("crmimport", "run", "--tenant", t.v.Tenant, "--source", src, "--update=overwrite")+" "+path)
	}
	a.Command = strings.Join(cmds, "\n")
	a.Buttons = append(a.Buttons, button{action: action{Label: "Browse the records", OK: true, Href: t.v.Records}})
	return []nextAction{a}
}

// links tell the records imported with an empty link or owner (R6a): the
// run that imports what they name completes them.
func (t *tenantNext) links() []nextAction {
	var out []nextAction
	if gs := t.groups(ledger.OpenUnlinked); len(gs) > 0 {
		a := nextAction{For: ledger.OpenUnlinked, Title: records(total(gs)) + " unlinked",
			Text: "They were imported with a link to a record that is not imported yet (a contact's company, a deal's contact); " +
				"the run that imports it completes the link (R6a)."}
		for _, src := range sourcesOf(gs) {
			a.Buttons = append(a.Buttons, button{action: action{Label: "New import of what they name", OK: true,
				Href: "/import?" + url.Values{"tenant": {t.v.Tenant}, "source": {src}}.Encode()}})
		}
		out = append(out, a)
	}
	if gs := t.groups(ledger.OpenUnowned); len(gs) > 0 {
		a := nextAction{For: ledger.OpenUnowned, Title: records(total(gs)) + " unowned",
			Text: "They were imported with an owner that no user of the export resolves; an import of the users — the export's " +
				"users file, or one written for --users (id, email, name) — completes them (R6a)."}
		for _, src := range sourcesOf(gs) {
			q := url.Values{"tenant": {t.v.Tenant}, "source": {src}, "only": {ledger.User.Plural()}}
			if path, _ := t.latestInput(src); path != "" {
				q.Set("path", path)
			}
			a.Buttons = append(a.Buttons, button{action: action{Label: "Import the users", OK: true, Href: "/import?" + q.Encode()}})
		}
		out = append(out, a)
	}
	return out
}
