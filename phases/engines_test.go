package phases

import (
	"context"
	"testing"

	"crmimport/store"
	"crmimport/store/storetest"
)

// TestEveryEngineIsTaught: the "full" failpoint knows every engine of
// store's, and a third engine fails it, naming it.
func TestEveryEngineIsTaught(t *testing.T) {
	t.Parallel()
	storetest.Taught(t, map[string]func(store.Dialect){
		"phases.fillUp": func(d store.Dialect) { _ = fillUp(context.Background(), d, nil, 1) },
	})
}
