package importer

import (
	"fmt"
)

// DefaultBatchSize is how many records commit together with their
// checkpoint (R12): a crash loses at most one batch of work.
const DefaultBatchSize = 5000

// MaxBatchSize bounds --batch-size: a batch's records, rows and slots are
// held until it commits, so one batch of a whole export held them all (1.2
// million records: 294 MiB). At this size a batch costs about 15 MiB, and a
// run stays within the memory the README states.
const MaxBatchSize = 50000

// CheckBatchSize refuses a batch size outside 1…MaxBatchSize, as a usage
// error: both faces ask it (Plan too, where 0 asks for the default).
func CheckBatchSize(n int) error {
	if n < 1 || n > MaxBatchSize {
		return &UsageError{Msg: fmt.Sprintf("the batch size must be between 1 and %d records (a batch is held in memory until it commits), got %d", MaxBatchSize, n)}
	}
	return nil
}
