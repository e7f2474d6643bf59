// Package bytesize writes a size in bytes for people: "512 bytes",
// "1.2 KiB", "3.4 MiB", "1.0 GiB" (binary units, one decimal). The messages
// and pages that tell a size measured or a limit — a file's size, what the
// input's bomb guards allow, a record that is cut short, how much of a file
// a task has read — write it with this one function.
//
// It imports no package of the project, so that the readers at the ground
// floor can use it as well as the faces.
package bytesize

import "fmt"

// Format writes n bytes: "512 bytes", "1.2 KiB", "3.4 MiB", "1.0 GiB".
func Format(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
