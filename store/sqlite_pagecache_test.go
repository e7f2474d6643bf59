package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// TestPageCacheFromTheBlock: a connection's pages come from the block set
// aside as the process started (sqlite_pagecache.go), not one allocation
// each at twice their size (issue 28).
func TestPageCacheFromTheBlock(t *testing.T) {
	require.NoError(t, pageCacheErr)
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "crm.db"))
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM migration_records`).Scan(&n))
	used, err := pageCacheUsed()
	require.NoError(t, err)
	require.Positive(t, used, "the open database's pages are in the block")
	require.LessOrEqual(t, used, int64(pageCacheSlots))
}

// pageStatus is what SQLITE_STATUS_PAGECACHE_USED writes: now, and the
// most since the process began. A variable of the package: it never moves.
var pageStatus [2]int64

// pageCacheUsed is how many pages of the block SQLite uses now.
func pageCacheUsed() (int64, error) {
	tls := libc.NewTLS()
	defer tls.Close()
	p := uintptr(unsafe.Pointer(&pageStatus))
	if rc := sqlite3.Xsqlite3_status64(tls, sqlite3.SQLITE_STATUS_PAGECACHE_USED, p, p+8, 0); rc != sqlite3.SQLITE_OK {
		return 0, fmt.Errorf("the page cache's status: SQLite error %d", rc)
	}
	return pageStatus[0], nil
}
