package store

import (
	"fmt"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite's page cache takes the pages of a writing connection from one
// block of memory set aside as the process starts (SQLITE_CONFIG_PAGECACHE)
// instead of one allocation per page. Under modernc's allocator a 4 KiB
// page with its header (about 4.3 KiB) took a block of 8 KiB, so a cache
// cost twice its size; in the block, a page costs its size. The block is
// allocated, not written: its pages count in memory only as the cache
// fills them. The block is the process's: pages past its slots, whichever
// connection asks (the readers beside a writer), SQLite allocates page by
// page, as before, and a file of another page size never uses it.
//
// sqlite3_config works only before SQLite initialises, which it does at
// the first connection a process opens: hence the package's
// initialisation, in the package every connection is opened through. modernc.org/sqlite reaches it only
// through its lib package, with a C thread state and a C va_list.

// pageCacheSlots is how many pages the block holds: the writing
// connection's cache (CacheKiB).
const pageCacheSlots = CacheKiB / 4

// pageCacheErr is why the block was not set up, if it was not; the
// connections then allocate their pages one by one, as SQLite does
// unconfigured, in twice the memory. TestPageCacheFromTheBlock fails on it.
var pageCacheErr = setPageCache(pageCacheSlots)

func setPageCache(slots int) error {
	tls := libc.NewTLS()
	defer tls.Close()
	// SQLITE_CONFIG_PCACHE_HDRSZ: the bytes each page needs beside its
	// content, for this build of SQLite.
	va := libc.NewVaList(uintptr(unsafe.Pointer(&pageHeader)))
	rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_PCACHE_HDRSZ, va)
	libc.Xfree(tls, va)
	if rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("page cache: SQLITE_CONFIG_PCACHE_HDRSZ: SQLite error %d", rc)
	}
	size := (pageSize + int(pageHeader) + 7) &^ 7
	block := libc.Xmalloc(tls, libc.Tsize_t(size*slots))
	if block == 0 {
		return fmt.Errorf("page cache: no memory for %d pages of %d bytes", slots, size)
	}
	// The block lives as long as the process: SQLite keeps it.
	va = libc.NewVaList(block, int32(size), int32(slots))
	rc = sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_PAGECACHE, va)
	libc.Xfree(tls, va)
	if rc != sqlite3.SQLITE_OK {
		libc.Xfree(tls, block)
		return fmt.Errorf("page cache: SQLITE_CONFIG_PAGECACHE: SQLite error %d (SQLite was initialised before store)", rc)
	}
	return nil
}

// pageHeader is what SQLite writes SQLITE_CONFIG_PCACHE_HDRSZ's answer to:
// a variable of the package, which never moves, as C code needs.
var pageHeader int32

// pageSize is the page size of crmimport's files: SQLite's default, which
// Open never changes.
const pageSize = 4096
