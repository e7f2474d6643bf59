package importer

import (
	"sync"

	"crmimport/importer/profile"
	"crmimport/importer/reader"
)

// feedChunkSize is how many records the feed hands over at a time.
const feedChunkSize = 256

// feedBudget bounds, in bytes of their text, the records the feed has read
// and the task has not yet written: the feed's chunks, the chunk a batch
// gathers and the one it writes. Counted in records alone, a file of notes
// near the bound for one record (reader.MaxRecordBytes) held hundreds of
// them (issue 23 item 21: ten of 15 MiB, 347 MiB of RSS). Records of a few
// KiB never reach it: reading and writing go on side by side as before.
const feedBudget = 4 << 20

// feed reads a task's file on a goroutine of its own — parsing, mapping and
// validating records — while the task's batches write the previous ones:
// two cores, one reading and one writing. Records are handed over in file
// order; what the batches have taken is what the checkpoint counts, so
// reading ahead changes nothing of R12.
//
// Once the records read and not yet written hold feedBudget bytes, the
// feed hands over what it has read, marking the last record (next's held),
// and waits: the batch writes what it has taken and says so (written).
type feed struct {
	ch      chan feedChunk
	quit    chan struct{}
	done    sync.WaitGroup
	pending []profile.Record
	end     error // io.EOF or what stopped the reading, once the feed has run dry
	ends    []int64
	sizes   []int64
	hold    bool // the last record pending is the one the feed waits after
	// bytes are the raw bytes of the input read when the last record
	// taken was read (progress: ahead of it by what the reader buffers).
	bytes int64

	mu    sync.Mutex
	held  int64         // bytes of the records read and not yet written
	taken int64         // of them, the bytes of those next has handed over
	freed chan struct{} // written's word to the waiting feed
}

type feedChunk struct {
	recs  []profile.Record
	ends  []int64 // per record, the raw bytes read once it was read
	sizes []int64 // per record, the bytes of its text
	err   error   // after recs: io.EOF or a read error
	hold  bool    // the feed waits after the last record until what it read is written
}

// startFeed reads rr from where it stands, mapping and validating every
// record: one with a final slot is compared with what its slot says was
// last written (R17), through its validated values.
//
// read counts the bytes of the input read so far, for progress.
func startFeed(rr *reader.RowReader, m *profile.Mapper, read func() int64) *feed {
	f := &feed{ch: make(chan feedChunk, 4), quit: make(chan struct{}), freed: make(chan struct{}, 1)}
	f.done.Add(1)
	go func() {
		defer f.done.Done()
		for {
			recs := make([]profile.Record, 0, feedChunkSize)
			ends := make([]int64, 0, feedChunkSize)
			sizes := make([]int64, 0, feedChunkSize)
			var err error
			hold := false
			for len(recs) < feedChunkSize && !hold {
				row, rerr := rr.Next()
				if rerr != nil {
					err = rerr
					break
				}
				ends = append(ends, read())
				size := rowBytes(row)
				sizes = append(sizes, size)
				r := m.Map(row)
				if !r.Excluded {
					m.Complete(&r)
					r.Digest() // R17: made here, beside the writing
				}
				recs = append(recs, r)
				hold = f.add(size)
			}
			select {
			case f.ch <- feedChunk{recs: recs, ends: ends, sizes: sizes, err: err, hold: hold && err == nil}:
			case <-f.quit:
				return
			}
			if err != nil {
				return
			}
			for hold && f.spent() {
				select {
				case <-f.freed:
				case <-f.quit:
					return
				}
			}
		}
	}()
	return f
}

// rowBytes is what a row read holds of its file's text: its values (the
// names are its header's), or the text of one not read as a row.
func rowBytes(row reader.Row) int64 {
	n := int64(len(row.Text))
	for _, c := range row.Cols {
		n += int64(len(c.Value))
	}
	return n
}

// add counts a record read, and reports whether the feed's budget is spent.
func (f *feed) add(size int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held += size
	return f.held >= feedBudget
}

// spent reports whether the records read and not yet written hold the
// feed's budget.
func (f *feed) spent() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held >= feedBudget
}

// next returns the next record, or io.EOF after the last, or the error that
// stopped the reading. held reports that the feed waits after this record
// until the records taken are written (written).
func (f *feed) next() (r profile.Record, held bool, err error) {
	for len(f.pending) == 0 {
		if f.end != nil {
			return profile.Record{}, false, f.end
		}
		c := <-f.ch
		f.pending, f.ends, f.sizes, f.hold = c.recs, c.ends, c.sizes, c.hold
		if c.err != nil {
			f.end = c.err
		}
	}
	r = f.pending[0]
	f.pending[0] = profile.Record{} // its text is the task's now, not the chunk's to keep
	f.mu.Lock()
	f.taken += f.sizes[0]
	f.mu.Unlock()
	f.pending, f.bytes, f.ends, f.sizes = f.pending[1:], f.ends[0], f.ends[1:], f.sizes[1:]
	return r, f.hold && len(f.pending) == 0, nil
}

// written says that every record next has handed over is written (or was
// no record of the task's kind): their bytes no longer count, and a feed
// waiting for them reads on.
func (f *feed) written() {
	f.mu.Lock()
	f.held -= f.taken
	f.taken = 0
	f.mu.Unlock()
	select {
	case f.freed <- struct{}{}:
	default: // a word is waiting already
	}
}

// stop ends the reading goroutine and waits for it.
func (f *feed) stop() {
	close(f.quit)
	f.done.Wait()
}
