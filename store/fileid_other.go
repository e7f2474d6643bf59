//go:build !unix

package store

import "os"

// fileIdentity: no inode to tell here; a run's liveness then rests on its
// owner's process and heartbeat alone.
func fileIdentity(os.FileInfo) string { return "" }
