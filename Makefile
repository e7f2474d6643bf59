# crmimport — `make help` lists the targets.

GO      ?= go
BIN     := bin/crmimport
DEMO_DB := demo.db
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.DEFAULT_GOAL := help
.PHONY: help build demo test tools crashtest race lint fuzz bench bench-layers clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-13s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build bin/crmimport (pure Go: modernc.org/sqlite, no cgo)
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/crmimport

# The demo export holds broken rows on purpose, so the demo ends partial and
# crmimport exits 3. The first pass imports the companies alone, so that the
# second shows all four outcomes: imported, unchanged (the companies),
# skipped (needs a fresh run) and failed (broken).
demo: build ## import the bundled demo export into a fresh demo.db and print the summary
	@rm -f $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm
	@echo "== pass 1: the companies alone (crmimport run --only companies)"
	@$(BIN) --db $(DEMO_DB) --quiet run --tenant demo --source canonical --only companies fixtures/demo > /dev/null; \
	  code=$$?; [ $$code -eq 3 ] || { echo "pass 1 exited $$code"; exit 1; }
	@echo "== pass 2: the whole export"
	@$(BIN) --db $(DEMO_DB) run --tenant demo --source canonical fixtures/demo; code=$$?; \
	  if [ $$code -eq 3 ]; then \
	    echo; echo "crmimport exited 3 (partial), as the demo is meant to: fixtures/demo/README.md lists the broken rows."; \
	    echo "Look around: $(BIN) --db $(DEMO_DB) runs · $(BIN) --db $(DEMO_DB) report 2 · $(BIN) --db $(DEMO_DB) undo 2 --dry-run · $(BIN) --db $(DEMO_DB) rejects 2 --out fix-2 --as-export"; \
	    echo; echo "Or open it on the desktop page: $(BIN) --db $(DEMO_DB) ui"; \
	  else echo "unexpected exit code $$code (the demo should end partial: 3)"; exit 1; fi

# The desktop's tests drive a real Chromium (chromedp), and every test of
# the ledger, the run and the command line runs on PostgreSQL too, in a
# throwaway cluster the tests start and stop (store/pgtest): both are
# installed here when missing, as make bench installs sqlite3; no test
# skips for want of either.
test: tools ## the tests CI runs (real SQLite files and a real PostgreSQL server, real processes, a real browser, a small crash suite on each)
	$(GO) test -count=1 -timeout 25m ./...
	cd cmd/crmimport && $(GO) test -count=1 -run '^TestCrash$$' -crash.dialect=postgres

# apt-get as root, else through sudo; never a question asked, since its
# output is hidden (a debconf prompt would wait unseen).
APT := $(if $(filter 0,$(shell id -u)),,sudo )env DEBIAN_FRONTEND=noninteractive apt-get

# What the tests run besides Go, on a fresh Debian (one apt-get update, one
# install of what is missing):
#   - Chromium for the browser tests (cmd/crmimport/browser_test.go), which
#     take screenshots: fonts-liberation, the fonts it would recommend;
#   - PostgreSQL's server (initdb, pg_ctl) for store/pgtest, which runs it
#     as the postgres user under root (the package makes that user); psql,
#     which the tests run as a user pastes doctor's repair lines;
#   - the sqlite3 shell, which reads the file from another process, as
#     doctor's repairs do;
#   - poppler-utils' pdftoppm, which turns the pages of the HTML report
#     Chromium printed to PDF into images (issue 27 item 5: no clipped
#     table on A4 or Letter).
# The rest is Debian's essential set: sh, runuser, the C.UTF-8 locale
# (initdb --locale=C.UTF-8).
tools: ## install what the tests need where it is missing: Chromium, PostgreSQL, the sqlite3 shell, poppler's pdftoppm (Debian packages)
	@missing=; \
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null || \
	  missing="$$missing chromium fonts-liberation"; \
	{ ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null; } && command -v psql >/dev/null && \
	  { [ "$$(id -u)" != 0 ] || id postgres >/dev/null 2>&1; } || missing="$$missing postgresql"; \
	command -v sqlite3 >/dev/null || missing="$$missing sqlite3"; \
	command -v pdftoppm >/dev/null || missing="$$missing poppler-utils"; \
	if [ -n "$$missing" ]; then echo "installing$$missing (what the tests run)"; \
	  ($(APT) update -qq && $(APT) install -y -qq --no-install-recommends $$missing) >/dev/null || \
	  { echo "the tests need$$missing: apt-get install -y$$missing"; exit 1; }; fi

# R12–R14: kill a run at any instant, run `resume`, and the database is the
# one an uninterrupted run leaves. The crash suite (cmd/crmimport/crash_*_test.go)
# proves it with real processes: SIGKILL at 100+ seeded failpoints and
# wall-clock instants (some during resume), 20 stops (SIGTERM, SIGINT,
# `crmimport stop`), 20 admission races (R13), full-disk commit faults; each
# resumed and compared with an uninterrupted run; and undos (R16) killed at
# 50 points and stopped, each resumed and compared with an uninterrupted
# undo; delta reruns (R6a, R17: `run --update` of an edited export after a
# first run without its companies, which relinks and updates) killed at 24
# points and their undos at 10, each resumed and compared with an
# uninterrupted rerun or undo. make test runs a small
# version. The seed is new each time and printed; SEED=N replays a whole
# suite, and every failure prints the command that replays its one case.
CRASH_SIZES := -crash.kills=104 -crash.stops=20 -crash.races=20 -crash.tenants=5 -crash.faults=10 \
	-crash.undos=50 -crash.undostops=6 -crash.deltas=24 -crash.deltaundos=10

# The second pass runs batches of 600 records, more than a chunk (256): its
# kills also meet a chunk decided while the one before it writes
# (speculative deciding, issue 16).
CRASH_CHUNKED := -crash.contacts=2000 -crash.batch=600 -crash.kills=40 -crash.stops=6 -crash.races=4 \
	-crash.tenants=2 -crash.faults=4 -crash.undos=10 -crash.undostops=2 -crash.deltas=6 -crash.deltaundos=3
# The third pass is on PostgreSQL (issue 17), a schema per case in a
# throwaway cluster: kills, stops, admission races, two tenants, faults, undos,
# delta reruns and their undos. Its batches of 40 records write their slots
# and rows by COPY (issue 28: store.CopyMin is 16), so that every batch
# killed before its commit holds COPYs, a rerun's new rows among them.
CRASH_POSTGRES := -crash.dialect=postgres -crash.batch=40 -crash.kills=60 -crash.stops=10 -crash.races=20 -crash.tenants=5 -crash.faults=6 \
	-crash.undos=20 -crash.undostops=4 -crash.deltas=10 -crash.deltaundos=4
crashtest: tools ## R12–R14, R16, R6a, R17: kill, stop and race real runs, undos and delta reruns at 150+ points, on SQLite and on PostgreSQL; each resumed to the uninterrupted one's database
	@seed=$${SEED:-$$(date +%s)}; \
	for sizes in "$(CRASH_SIZES)" "$(CRASH_CHUNKED)" "$(CRASH_POSTGRES)"; do out=$$(mktemp); \
	  if (cd cmd/crmimport && $(GO) test -count=1 -timeout 30m -run '^TestCrash$$' $$sizes \
	      -crash.seed=$$seed -crash.summary) > $$out 2>&1; \
	  then grep '^crashtest ' $$out; rm -f $$out; \
	  else cat $$out; rm -f $$out; echo "make crashtest FAILED (seed=$$seed, $$sizes): each failure above prints the command that replays it"; exit 1; fi; \
	done

# The race detector is slow over modernc's transpiled C, so it stays out of
# make test; run it before resolving an issue. The command line's tests run
# on both dialects, over ten minutes under it: hence the longer timeout.
race: tools ## the tests under the race detector
	@# The race detector is cgo: it needs a C compiler, which a fresh machine may not have.
	@command -v $$($(GO) env CC) >/dev/null || { echo "installing gcc (the race detector needs a C compiler)"; \
	  ($(APT) update -qq && $(APT) install -y -qq --no-install-recommends gcc libc6-dev) >/dev/null || \
	  { echo "make race needs a C compiler: apt-get install -y gcc"; exit 1; }; }
	$(GO) test -race -count=1 -timeout 60m ./...

# lint/main.go: imports point one way, down (every package has a floor), and
# which way down is: STYLE 1's rules by name (lint/deps.go: store imports
# nothing of ours, ledger only store, phases never importer, …); and
# only store opens the database — closing any descriptor of the file drops
# SQLite's locks, which are the process's (issue 23).
lint: ## gofmt, go vet, staticcheck, and the project's own checks (lint/: import floors, STYLE 1 import rules, only store opens the database)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) run ./lint

# SPEC §4: bad input never panics. Each target runs for FUZZTIME, one after
# another, seeded from fixtures/ (the hand-made exports and the bad-input
# corpus) and from its package's testdata/fuzz/, where every crasher found
# is kept once fixed: go test runs those as regression tests. A target is
# named with its package (go test fuzzes one package at a time).
# A new input is minimised for at most FUZZMINIMIZE execs: with go test's
# default (a minute), the XLSX targets, whose execs each read a deflated
# zip, spent most of their time minimising and reported no execs.
FUZZTIME ?= 5m
FUZZMINIMIZE ?= 2000x
FUZZ_TARGETS := importer/reader:FuzzReadCSV importer/reader:FuzzReadJSON importer/reader:FuzzReadXLSX \
	importer/reader:FuzzReadXLSXSheet importer/profile:FuzzMapRow

fuzz: ## fuzz the CSV, JSON and XLSX readers and the profile mapper, FUZZTIME each (default 5m)
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; target=$${t##*:}; \
	  echo "== $$target ($(FUZZTIME))"; \
	  $(GO) test ./$$pkg -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) || exit 1; \
	done

# Issues 4 and 16's measure: crmimport next to sqlite3's bare .import of the
# same CSV files (the floor), to the schema floor (the rows and slots a first
# run writes, written into crmimport's schema and nothing else:
# cmd/crmbench/schemafloor.go) and to sqlite-utils insert, on a realistic export
# (2% failed, 5% skipped per kind) and a clean one, three rounds per scale,
# medians and ratios taken inside a round (times drift on shared machines).
# Scale 1 is the seed's customer: 100,000 contacts, about 300,000 records.
# It writes BENCH.md (issue 28): the machine, its load, every column's median
# and range at each scale. BIG=16 adds one round of .import, the schema
# floor and the first run at scale 16: about 1.5 GB of CSV, 15-25 GB of
# disk, a quarter of an hour.
SCALES ?= 1 4
BIG ?=
bench: build ## crmimport vs sqlite3 .import, the schema floor, sqlite-utils and psql \copy: runs, reruns, undo, peak RSS, into BENCH.md (SCALES="1 4", BIG=16)
	@command -v sqlite3 >/dev/null || { echo "installing sqlite3 (the floor)"; \
	  ($(APT) update -qq && $(APT) install -y -qq sqlite3) >/dev/null || { echo "install sqlite3 first"; exit 1; }; }
	@command -v sqlite-utils >/dev/null || { echo "installing sqlite-utils (the peer)"; \
	  ($(APT) update -qq && $(APT) install -y -qq sqlite-utils) >/dev/null || \
	  { echo "apt-get could not install sqlite-utils: install it first (Debian: apt-get install sqlite-utils; elsewhere: pip install sqlite-utils)"; exit 1; }; }
	$(GO) run ./cmd/crmbench -crmimport $(BIN) -scales "$(SCALES)" $(if $(BIG),-big $(BIG)) -out BENCH.md

bench-layers: ## the Go benchmarks per layer: read and map, decide and resolve, write a batch, claim
	$(GO) test -run '^$$' -bench . -benchtime 5x ./importer/ ./importer/profile/ ./ledger/

clean: ## remove the binary, the demo database and its fix folder
	rm -rf bin $(DEMO_DB) $(DEMO_DB)-wal $(DEMO_DB)-shm fix-2
