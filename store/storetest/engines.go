package storetest

import (
	"errors"
	"testing"

	"crmimport/store"
)

// Third is an engine that store does not know: a package's test gives it
// to each of its per-engine choices to see that a new engine fails there,
// naming the choice (store.UntaughtError), until it is taught.
const Third store.Dialect = "third"

// Taught checks each per-engine choice of a package, named by its site
// (the name its default case gives store.Dialect.Untaught): given every
// engine of store.Engines(), the choice knows it; given Third, it panics
// naming exactly its site. The choice is given no database: what it does
// once it has chosen may fail, or panic on the missing handle, and is the
// business of the package's tests on each engine (Run); only an
// UntaughtError counts here.
func Taught(t *testing.T, sites map[string]func(d store.Dialect)) {
	t.Helper()
	for site, choose := range sites {
		for _, d := range store.Engines() {
			if u := untaught(func() { choose(d) }); u != nil {
				t.Errorf("%s does not know engine %s: %v", site, d, u)
			}
		}
		u := untaught(func() { choose(Third) })
		switch {
		case u == nil:
			t.Errorf("%s: a third engine went past the choice as if it knew it", site)
		case u.Dialect != Third || u.Site != site:
			t.Errorf("%s: a third engine failed at another choice: %v", site, u)
		}
	}
}

// untaught runs f and returns the UntaughtError it panicked with, if any;
// any other panic is the handle that was not given.
func untaught(f func()) (u *store.UntaughtError) {
	defer func() {
		if err, ok := recover().(error); !ok || !errors.As(err, &u) {
			u = nil
		}
	}()
	f()
	return nil
}
