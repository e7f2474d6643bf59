package main

// Admission races (R13): several processes start `run` on one tenant at the
// same instant; exactly one is admitted, every other exits 6 naming it, and
// no second run row or duplicate slot ever appears. And two tenants started
// at the same instant on one database both finish: busy timeout and short
// write transactions, never "database is locked".

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"crmimport/store/storetest"
)

// raceLead is how far ahead the racers are told to start: enough for every
// child to be exec'd and asleep before the instant, on two busy cores.
const raceLead = 400 * time.Millisecond

// startRacers starts one child per tenant, each sleeping until the same
// instant before it runs (CRMIMPORT_TEST_START_AT, see TestMain).
func startRacers(c *crashCase, path string, ref *crashRef, fp string, tenants ...string) []*proc {
	c.t.Helper()
	at := time.Now().Add(raceLead)
	env := map[string]string{"CRMIMPORT_TEST_START_AT": strconv.FormatInt(at.UnixNano(), 10)}
	if fp != "" {
		env["CRMIMPORT_FAILPOINTS"] = fp
	}
	var ps []*proc
	for _, tenant := range tenants {
		ps = append(ps, startProc(c.t, env, runArgs(path, tenant, ref)...))
	}
	if late := time.Since(at); late > 0 {
		c.t.Logf("the last racer was started %s after the instant: this race was not simultaneous", late)
	}
	return ps
}

func crashRacesGroup(t *testing.T, ref *crashRef) {
	cases(t, *crashRaces, func(t *testing.T, n int) {
		c := newCase(t, "Races", n)
		r := caseRand("Races", n)
		// Half the races are on a file that does not exist yet: the
		// racers also race to create it and its schema.
		fresh := r.IntN(2) == 0
		k := *crashRacers
		c.point = fmt.Sprintf("%d × run at one instant, database %s", k, map[bool]string{true: "not yet created", false: "ready"}[fresh])
		path := dbPath(t)
		if !fresh {
			require.NoError(t, storetest.Open(t, path).Close())
		}
		tenants := make([]string, k)
		for i := range tenants {
			tenants[i] = crashTenant
		}
		// The winner waits at its first batch, so that every loser meets
		// it live: a loser that came after it ended would be a second run
		// in sequence, not a race.
		ps := startRacers(c, path, ref, "batch:company:1=sleep:300ms", tenants...)
		winner := -1
		var results []stepResult
		for i, p := range ps {
			res := p.result(t, 0)
			results = append(results, res)
			switch res.code {
			case ref.code:
				if winner >= 0 {
					c.failNow(fmt.Sprintf("racers %d and %d were both admitted (exit %d)", winner+1, i+1, res.code))
				}
				winner = i
			case exitRefused:
			default:
				msg := fmt.Sprintf("racer %d: exit %d, want %d (admitted) or 6 (refused); stderr:\n%s", i+1, res.code, ref.code, res.stderr)
				c.failNow(msg)
			}
		}
		if winner < 0 {
			c.fatalf("no racer was admitted: %v", codesOf(results))
		}
		sum, err := decodeSummary(results[winner].stdout)
		if err != nil {
			c.fatalf("the winner's summary: %v\n%s", err, results[winner].stdout)
		}
		for i, res := range results {
			if i == winner {
				continue
			}
			var doc struct {
				Error       string `json:"error"`
				LiveRun     int64  `json:"live_run"`
				Interrupted bool   `json:"interrupted"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
				c.fatalf("racer %d: stdout is not one JSON document: %v\n%s", i+1, err, res.stdout)
			}
			if doc.LiveRun != sum.Run || doc.Interrupted || !strings.Contains(doc.Error, fmt.Sprintf("run %d", sum.Run)) {
				c.fatalf("racer %d was refused without naming the live run %d: %s", i+1, sum.Run, res.stdout)
			}
		}
		if q := query(t, path, `SELECT count(*) FROM migrations`); q[0] != "1" {
			c.fatalf("R13: %s run rows after the race, want 1", q[0])
		}
		checkEqualToReference(c, path, crashTenant, ref, &sum)
		stats.add(func(s *crashStats) { s.races++; s.racesOK++ })
		t.Logf("%s: racer %d admitted, run %d; exits %v", c.point, winner+1, sum.Run, codesOf(results))
	})
}

func codesOf(rs []stepResult) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.code)
	}
	return out
}

func crashTenantsGroup(t *testing.T, ref *crashRef) {
	cases(t, *crashTenants, func(t *testing.T, n int) {
		c := newCase(t, "Tenants", n)
		r := caseRand("Tenants", n)
		fresh := r.IntN(2) == 0
		c.point = fmt.Sprintf("two tenants at one instant, database %s", map[bool]string{true: "not yet created", false: "ready"}[fresh])
		path := dbPath(t)
		if !fresh {
			require.NoError(t, storetest.Open(t, path).Close())
		}
		tenants := []string{crashTenant, "globex"}
		ps := startRacers(c, path, ref, "", tenants...)
		for i, p := range ps {
			res := p.result(t, 0)
			if res.code != ref.code {
				msg := fmt.Sprintf("tenant %s: exit %d, want %d; stderr:\n%s", tenants[i], res.code, ref.code, res.stderr)
				c.failNow(msg)
			}
			sum, err := decodeSummary(res.stdout)
			if err != nil {
				c.fatalf("tenant %s: %v\n%s", tenants[i], err, res.stdout)
			}
			checkEqualToReference(c, path, tenants[i], ref, &sum)
		}
		stats.add(func(s *crashStats) { s.tenants++ })
	})
}
