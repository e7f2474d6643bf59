package report_test

import (
	"testing"

	"crmimport/store/storetest"
)

// The PostgreSQL cluster the tests start is stopped when they end.
func TestMain(m *testing.M) { storetest.Main(m) }
