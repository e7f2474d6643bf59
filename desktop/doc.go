// Package desktop is `crmimport ui` (SPEC §9): a local web application
// served by the binary itself — the runs, a run's page with live progress,
// the failed and skipped records, a new import, the ledger and the
// profiles — and the self-contained HTML run page of `report --format
// html`, rendered by the same templates so that the two never disagree.
//
// Every page and API route is backed by the library function of the
// matching command (runs, report, forensics …) and
// reads through a read-only pool of its own (store.OpenReader), so that it
// never waits behind the batches of a run the server itself runs. Live
// updates come from the database, so a run of any process shows live.
//
// Security (SPEC §9), on every route the server registers (routes.go):
// loopback addresses only; a random token of 128 bits per start, taken
// from the URL once into an HttpOnly, SameSite=Strict cookie named for the
// instance, or a Bearer header from a script; the Host header must name
// the server's own loopback address (DNS rebinding); every change is a
// POST from the page's own origin (Go's CrossOriginProtection) carrying
// X-Requested-By: crmimport; no GET changes anything; no CORS headers; a
// strict Content-Security-Policy; data from exports is escaped by
// html/template and set as text by the scripts. Files dropped onto the
// page, and the fix folders of failed rows edited on it (fixrows.go), are
// written 0600 in a 0700 folder beside the database — for a database on a
// server (PostgreSQL), which no file is beside, in the user's
// configuration folder (files.go: privateFolder).
package desktop
