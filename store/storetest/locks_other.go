//go:build !unix

package storetest

import "errors"

func probe(string) (Locks, error) {
	return Locks{}, errors.New("SQLite's POSIX locks are read on a unix system only")
}
