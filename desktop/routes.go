package desktop

import "net/http"

// route is one thing the server answers. Every route is registered from
// this table through guard (Host, token, origin): the security tests walk
// the table, so that a route added here cannot skip them.
type route struct {
	method  string
	pattern string
	h       http.HandlerFunc
}

func (s *Server) routeTable() []route {
	get := func(p string, h http.HandlerFunc) route { return route{http.MethodGet, p, h} }
	post := func(p string, h http.HandlerFunc) route { return route{http.MethodPost, p, h} }
	return []route{
		// Pages (SPEC §9), each at a URL a user can bookmark.
		get("/{$}", s.runsPage),
		get("/runs/{id}", s.runPage),
		get("/runs/{id}/failed", s.failedPage),
		get("/runs/{id}/skipped", s.skippedPage),
		get("/runs/{id}/grid", s.gridPage), // the review grid (grid.go)
		get("/runs/{id}/report.html", s.reportDownload),
		get("/runs/{id}/rejects.csv", s.rejectsDownload),
		get("/tenants", s.tenantsPage),         // the tenants, each with its latest run (tenants.go)
		get("/tenants/{tenant}", s.tenantPage), // a customer's page: its runs, what is open, what to do next
		get("/import", s.importPage),
		get("/ledger", s.ledgerPage),
		get("/profiles", s.profilesPage),
		get("/profiles/new", s.profileNewPage), // the mapping editor (suggest.go)
		get("/profiles/{name}", s.profilePage),
		get("/tenants/{tenant}/records", s.recordsPage),            // the records browser (browse.go)
		get("/tenants/{tenant}/records/{kind}/{id}", s.recordPage), // one record, its links and story
		get("/static/{file}", s.static),

		// The JSON API the pages use, in the shapes of --json (README).
		get("/api/runs", s.apiRuns),
		get("/api/runs/{id}", s.apiRun),
		get("/api/runs/{id}/events", s.apiEvents),
		get("/api/runs/{id}/rejects", s.rejectsDownload),
		get("/api/runs/{id}/failed", s.apiFailed),
		get("/api/runs/{id}/skipped", s.apiSkipped),
		post("/api/runs/{id}/stop", s.apiStop),
		post("/api/runs/{id}/resume", s.apiResume),
		get("/api/runs/{id}/undo", s.apiUndoPreview),
		post("/api/runs/{id}/undo", s.apiUndo),
		post("/api/runs/{id}/fix", s.apiFix),                 // edited failed rows, re-imported (fixrows.go)
		get("/api/runs/{id}/fix-outcomes", s.apiFixOutcomes), // what became of them
		get("/api/runs/{id}/grid", s.apiGrid),                // a page of the review grid (grid.go)
		post("/api/runs/{id}/grid/edits", s.apiGridEdits),    // cells changed, kept in the database
		post("/api/runs/{id}/grid/bulk", s.apiGridBulk),      // a bulk operation, previewed or saved
		post("/api/runs/{id}/grid/reimport", s.apiGridReimport),
		post("/api/inspect", s.apiInspect),
		post("/api/recognise", s.apiRecognise), // which built-in profile reads an export (recognise.go)
		post("/api/imports", s.apiImport),
		post("/api/uploads", s.apiUpload),
		get("/api/uploads", s.apiUploads),                     // the drops kept (files.go)
		post("/api/uploads/{name}/delete", s.apiDeleteUpload), // one of them deleted
		get("/api/files", s.apiFiles),
		get("/api/tenants", s.apiTenants),
		get("/api/tenants/{tenant}", s.apiTenant),
		get("/api/doctor", s.apiDoctor),
		get("/api/ledger/why", s.apiWhy),
		get("/api/profiles", s.apiProfiles),
		post("/api/profiles/suggest", s.apiSuggest),
		post("/api/profiles/preview", s.apiPreview),
		post("/api/profiles/save", s.apiSave),
		get("/api/tenants/{tenant}/records", s.apiRecords),
		get("/api/tenants/{tenant}/records/{kind}/{id}", s.apiRecord),
	}
}
