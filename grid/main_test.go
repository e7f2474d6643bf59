package grid_test

import (
	"testing"

	"crmimport/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }
