package desktop

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/store/storetest"
)

// TestRecordsBrowserPages (issue 27 item 2): the browser's pages and API
// over the demo's run, on both engines — the kinds' tabs in plan order
// with their counts, the first kind with rows opened, a check and its
// rows, the API's page in the same words; an unknown tenant is a 404 (a
// typo is not an empty tenant), a kind, a check or a link that cannot be
// is a bad request, and so is a check that no row of the kind can be in.
func TestRecordsBrowserPages(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := testServer(t, addr)
		get := func(path string) (int, string) {
			t.Helper()
			w := s.do(t, req{http.MethodGet, path, s.addr, nil, true})
			return w.Code, w.Body.String()
		}
		code, body := get("/tenants/demo/records")
		require.Equal(t, http.StatusOK, code, body)
		require.Regexp(t, `(?s)data-kind="users">Users <span class="tally">0</span>.*data-kind="companies" aria-current="page">Companies <span class="tally">26</span>`, body,
			"the kinds in plan order, the first with rows opened: 27 companies imported, one of them found (matched), 26 rows")
		require.Contains(t, body, "Brightwater Bakery")

		code, body = get("/tenants/demo/records?kind=contacts&check=unlinked")
		require.Equal(t, http.StatusOK, code, body)
		for _, id := range []string{"con-045", "con-050", "con-055"} {
			require.Contains(t, body, ">"+id+"<", "an unlinked contact of the demo")
		}
		require.Contains(t, body, `data-check="unlinked" class="check-unlinked" aria-current="page">Unlinked <span class="tally">3</span>`)
		require.NotContains(t, body, ">con-001<")
		require.Contains(t, body, "acc-099 <span class=\"badge flag-unlinked\">unlinked</span>", "the company it waits for")

		code, body = get("/api/tenants/demo/records?kind=deals&check=unlinked&limit=1")
		require.Equal(t, http.StatusOK, code, body)
		var p struct {
			Tenant string
			Total  int64
			Next   int64
			Rows   []struct {
				Slots []struct {
					SourceID string `json:"source_id"`
				}
			}
		}
		require.NoError(t, json.Unmarshal([]byte(body), &p))
		require.Equal(t, "demo", p.Tenant)
		require.Equal(t, int64(2), p.Total)
		require.Len(t, p.Rows, 1)
		require.Equal(t, "dl-033", p.Rows[0].Slots[0].SourceID)
		require.NotZero(t, p.Next)

		code, body = get("/tenants/nobody/records")
		require.Equal(t, http.StatusNotFound, code, body)
		require.Contains(t, body, `no record of tenant "nobody"`)
		for _, bad := range []string{"?kind=widgets", "?check=lovely", "?kind=emails&check=unowned", "?kind=notes&link=owner_id", "?after=x"} {
			code, body = get("/tenants/demo/records" + bad)
			require.Equal(t, http.StatusBadRequest, code, "%s: %s", bad, body)
			code, body = get("/api/tenants/demo/records" + bad)
			require.Equal(t, http.StatusBadRequest, code, "%s: %s", bad, body)
			require.Contains(t, body, `"exit_code": 2`)
		}
		code, _ = get("/tenants/demo/records/contacts/999999")
		require.Equal(t, http.StatusNotFound, code)
		code, _ = get("/tenants/demo/records/widgets/1")
		require.Equal(t, http.StatusBadRequest, code)
		code, body = get("/api/tenants/demo/records/contacts/1")
		require.Equal(t, http.StatusOK, code, body)
		require.True(t, strings.Contains(body, `"stories"`) && strings.Contains(body, `"source_id": "con-001"`), body)
	})
}
