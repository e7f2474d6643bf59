package desktop

import (
	"testing"

	"crmimport/store/storetest"
)

// The tests run on SQLite and on a throwaway PostgreSQL cluster, which
// Main stops when they end.
func TestMain(m *testing.M) { storetest.Main(m) }
