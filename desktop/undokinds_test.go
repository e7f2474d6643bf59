package desktop

import (
	"encoding/json"
	"html"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"crmimport/canon"
	"crmimport/canon/canontest"
	"crmimport/importer"
	"crmimport/store/storetest"
)

// TestUndoKindsOfANewKind: a kind added to canon's table in this test
// alone is on the undo dialog's list, children first (R16: before its
// company and contact), with its plural — the page keeps no list of its own.
func TestUndoKindsOfANewKind(t *testing.T) {
	t.Parallel()
	s, err := undoKinds(canontest.WithKind(t, canontest.Ticket()))
	require.NoError(t, err)
	var got []undoKind
	require.NoError(t, json.Unmarshal([]byte(s), &got))
	require.Equal(t, []undoKind{{"activity", "activities"}, {"email", "emails"}, {"note", "notes"}, {"deal", "deals"},
		{"ticket", "tickets"}, {"lead", "leads"}, {"contact", "contacts"}, {"company", "companies"}, {"user", "users"}}, got)
}

// TestRunPageHandsTheUndoOrder: the run page gives the undo dialog the
// kinds children first from canon's table (data-kinds), which app.js
// reads.
func TestRunPageHandsTheUndoOrder(t *testing.T) {
	t.Parallel()
	storetest.RunAddress(t, func(t *testing.T, addr string) {
		s := undoServer(t, addr, importer.RunSpec{Tenant: "demo", Source: "canonical", Input: "../fixtures/demo"})
		w := s.do(t, req{http.MethodGet, "/runs/1", s.addr, nil, true})
		want, err := undoKinds(canon.KindTable())
		require.NoError(t, err)
		require.Contains(t, w.Body.String(), `id="undo" data-kinds="`+html.EscapeString(want)+`"`)
		require.Contains(t, want, `[{"kind":"activity","plural":"activities"},{"kind":"email","plural":"emails"},`)
	})
}
