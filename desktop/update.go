package desktop

import (
	"net/url"
	"strconv"
	"strings"

	"crmimport/importer/runopts"
	"crmimport/report"
)

// Changes at the source (R17, SPEC §11) on the run page: "Apply these
// changes" opens New import with the run's own options and --update
// checked (importLink), where a dry run shows what the run would update
// and Import imports exactly that plan (its digest, SPEC §9): a preview and
// its commit are the same plan, as for any import.

// applyAction labels the run page's "Apply these changes": shown (Label
// not "") when the run found outdated records that --update would apply
// and was not itself an update; disabled, with the reason, while the run
// is live or when its export is not here.
func applyAction(rep *report.Report, live bool) action {
	t := rep.ChangeTotals()
	if t.Applicable == 0 || rep.Run.Undoes != 0 {
		return action{}
	}
	opts, err := runopts.Decode(rep.Run)
	if err != nil || opts.Update != "" {
		return action{}
	}
	return applyOf(rep, opts, t.Applicable, live)
}

// applyOf is "Apply these changes" for n outdated records that run rep
// found (the tenant's page counts those still open), with rep's options.
func applyOf(rep *report.Report, opts runopts.Options, n int64, live bool) action {
	a := action{Label: "Apply these changes — " + report.Count(n) + " " + plural(int(min(n, 2)), "record", "records"), OK: true}
	switch {
	case live:
		a.OK, a.Why = false, "the run is working: it can be applied once it has ended"
	case rep.Dump != "":
		a.OK, a.Why = false, "the run was loaded from a dump: its export is not here; run the command above over a local copy"
	case len(opts.Inputs) > 0:
		a.OK, a.Why = false, "the run read several zips, which New import takes one at a time: run the command above"
	default:
		a.Href = importLink(rep, opts)
	}
	return a
}

// importLink is New import with run's options and --update checked.
func importLink(rep *report.Report, opts runopts.Options) string {
	v := url.Values{"path": {opts.Input}, "tenant": {rep.Run.Tenant}, "source": {rep.Run.Source}, "update": {"1"},
		"from": {strconv.FormatInt(rep.Run.ID, 10)}}
	switch {
	case opts.ProfileFile != "":
		v.Set("profile", opts.ProfileFile)
	case opts.Profile != "":
		v.Set("profile", opts.Profile)
	}
	if len(opts.Only) > 0 {
		v.Set("only", strings.Join(opts.Only, ","))
	}
	return "/import?" + v.Encode()
}
