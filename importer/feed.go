package importer

import (
	"sync"

	"crmimport/importer/profile"
	"crmimport/importer/reader"
)

// feedChunkSize is how many records the feed hands over at a time.
const feedChunkSize = 256

// feed reads a task's file on a goroutine of its own — parsing, mapping and
// validating records — while the task's batches write the previous ones:
// two cores, one reading and one writing. Records are handed over in file
// order; what the batches have taken is what the checkpoint counts, so
// reading ahead changes nothing of R12.
type feed struct {
	ch      chan feedChunk
	quit    chan struct{}
	done    sync.WaitGroup
	pending []profile.Record
	end     error // io.EOF or what stopped the reading, once the feed has run dry
	ends    []int64
	// bytes are the raw bytes of the input read when the last record
	// taken was read (progress: ahead of it by what the reader buffers).
	bytes int64
}

type feedChunk struct {
	recs []profile.Record
	ends []int64 // per record, the raw bytes read once it was read
	err  error   // after recs: io.EOF or a read error
}

// startFeed reads rr from where it stands. known are the ids that already
// have a final slot: those records will be unchanged (R2, never judged
// again), so the feed does not validate them.
//
// read counts the bytes of the input read so far, for progress.
func startFeed(rr *reader.RowReader, m *profile.Mapper, known *idTable, read func() int64) *feed {
	f := &feed{ch: make(chan feedChunk, 4), quit: make(chan struct{})}
	f.done.Add(1)
	go func() {
		defer f.done.Done()
		for {
			recs := make([]profile.Record, 0, feedChunkSize)
			ends := make([]int64, 0, feedChunkSize)
			var err error
			for len(recs) < feedChunkSize {
				row, rerr := rr.Next()
				if rerr != nil {
					err = rerr
					break
				}
				ends = append(ends, read())
				r := m.Map(row)
				if _, ok := known.get(r.ID); !ok && !r.Excluded {
					m.Complete(&r)
				}
				recs = append(recs, r)
			}
			select {
			case f.ch <- feedChunk{recs: recs, ends: ends, err: err}:
			case <-f.quit:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return f
}

// next returns the next record, or io.EOF after the last, or the error that
// stopped the reading.
func (f *feed) next() (profile.Record, error) {
	for len(f.pending) == 0 {
		if f.end != nil {
			return profile.Record{}, f.end
		}
		c := <-f.ch
		f.pending, f.ends = c.recs, c.ends
		if c.err != nil {
			f.end = c.err
		}
	}
	r := f.pending[0]
	f.pending, f.bytes, f.ends = f.pending[1:], f.ends[0], f.ends[1:]
	return r, nil
}

// stop ends the reading goroutine and waits for it.
func (f *feed) stop() {
	close(f.quit)
	f.done.Wait()
}
