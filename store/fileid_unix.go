//go:build unix

package store

import (
	"fmt"
	"os"
	"syscall"
)

func fileIdentity(st os.FileInfo) string {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%d:%d", uint64(s.Dev), uint64(s.Ino))
	}
	return ""
}
