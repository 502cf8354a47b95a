// Chunks loaded ahead of an iteration by other goroutines (Filter.Workers):
// read, checked and decompressed while the caller works through the chunk
// before, so a caller with a core to spare reads faster. The records and
// errors are those of the iteration without workers, in the same order.

package logfmt

import (
	"runtime"
	"sync"
)

// maxReadAhead bounds ReadAhead: four loaders already outrun the
// iteration's own work (a fifth of a payload read), and each holds a
// chunk.
const maxReadAhead = 4

// aheadBytes is the read-ahead's budget: chunks are loaded ahead until
// those waiting hold about this much (stored and decompressed), at least
// one per worker and one more. Small chunks (the ~110 KiB a recorder's
// flush timer seals at 1 kHz) are then dozens ahead, so a worker rarely
// waits for a free buffer, nor the iteration for a chunk: each such
// hand-off parks a goroutine and wakes it again (a futex each way),
// which at a few chunks ahead cost the second core most of its gain
// (1.0x one core at 110 KiB, 1.9x with 16 ahead).
const (
	aheadBytes     = 8 << 20
	maxAheadChunks = 64
)

// aheadChunks is how many chunks n workers load ahead of the plan: the
// budget over the plan's average loaded chunk: its meta section and
// record metadata (about 4x the section decompressed), and the stored and
// raw payload blocks of the channels read.
func (it *Iterator) aheadChunks(n int) int {
	var total int64
	for _, ci := range it.plan {
		c := &it.r.chunks[ci]
		total += blockHeaderSize + 5*int64(c.MetaLen)
		for _, cc := range c.Channels {
			if !it.f.MetaOnly && (it.want == nil || it.want[cc.Channel]) {
				total += int64(cc.StoredBytes) + int64(cc.RawBytes)
			}
		}
	}
	avg := max(total/int64(len(it.plan)), 1)
	return int(max(int64(n+1), min(maxAheadChunks, aheadBytes/avg)))
}

// ReadAhead is the Filter.Workers of a payload reader that may use every
// core the process has: GOMAXPROCS loaders (at most maxReadAhead), as
// both cores of a two-core machine load chunks while the iteration
// decodes the record metadata beside them; 0 (no read-ahead) on one
// core, where workers would only add hand-offs.
func ReadAhead() int {
	if p := runtime.GOMAXPROCS(0); p > 1 {
		return min(p, maxReadAhead)
	}
	return 0
}

// loaded is one chunk loaded ahead: its buffers, ready for the iteration
// to decode its record metadata batch by batch as it streams a chunk of
// its own (the entries of a whole chunk, 1.4 MB for 4 MiB of states,
// written on one core and read on another, cost more than decoding them
// where they are read), and the error that stopped its loading.
type loaded struct {
	lc      loadedChunk
	scratch []metaEntry // tolerant mode's check of every record
	err     error
}

// prefetcher loads the chunks of a plan in order, each by one of its
// workers, at most len(bufs) chunks ahead of the iteration.
type prefetcher struct {
	done []chan *loaded // by plan position: the chunk, once loaded
	free chan *loaded   // buffers the iteration is done with
	stop chan struct{}
	wg   sync.WaitGroup
	cur  *loaded // the chunk being iterated
}

// streamsAlone reports whether every chunk of the plan is sorted and
// ends before the next begins: each is then iterated on its own, as
// workers load them (chunks that overlap are merged by loadCluster).
func (it *Iterator) streamsAlone() bool {
	for p, ci := range it.plan {
		c := &it.r.chunks[ci]
		if !c.Sorted || (p+1 < len(it.plan) && it.r.chunks[it.plan[p+1]].MinMonoNs < c.MaxMonoNs) {
			return false
		}
	}
	return true
}

// startWorkers starts n workers loading the plan's chunks ahead.
func (it *Iterator) startWorkers(n int) {
	ahead := it.aheadChunks(n)
	pf := &prefetcher{done: make([]chan *loaded, len(it.plan)), free: make(chan *loaded, ahead), stop: make(chan struct{})}
	for i := range pf.done {
		pf.done[i] = make(chan *loaded, 1)
	}
	for range ahead {
		pf.free <- &loaded{}
	}
	type job struct {
		pos int
		buf *loaded
	}
	jobs := make(chan job)
	pf.wg.Add(1 + n)
	go func() { // hands out the plan in order, as buffers come free
		defer pf.wg.Done()
		defer close(jobs)
		for p := range it.plan {
			select {
			case b := <-pf.free:
				select {
				case jobs <- job{p, b}:
				case <-pf.stop:
					return
				}
			case <-pf.stop:
				return
			}
		}
	}()
	for range n {
		go func() {
			defer pf.wg.Done()
			for j := range jobs {
				it.loadAhead(j.buf, &it.r.chunks[it.plan[j.pos]])
				pf.done[j.pos] <- j.buf
			}
		}()
	}
	it.ahead = pf
}

// loadAhead loads one chunk into b: read, checked and decompressed. In
// tolerant mode every record is checked too, so that a damaged chunk is
// skipped whole, as loadCluster does.
func (it *Iterator) loadAhead(b *loaded, ci *ChunkInfo) {
	b.err = it.r.openChunk(&b.lc, ci, it.want, it.f.MetaOnly, 0)
	if b.err == nil && it.r.opts.Tolerant {
		_, b.err = b.lc.checkRecords(it.r.opts.Name, &b.scratch)
	}
}

// takeAhead moves the iteration to the next chunk the workers loaded,
// streamed as loadCluster streams a chunk. A damaged chunk is skipped in
// tolerant mode; otherwise the iteration stops at its error.
func (it *Iterator) takeAhead() {
	pf := it.ahead
	if pf.cur != nil {
		pf.free <- pf.cur
	}
	b := <-pf.done[it.pos]
	it.pos++
	pf.cur = b
	it.ei = 0
	it.entries = it.entries[:0]
	if len(it.slots) == 0 {
		it.slots = append(it.slots, nil)
	}
	it.slots[0] = &b.lc
	if b.err != nil {
		ce := asCorruption(b.err, it.r.opts.Name)
		if it.r.opts.Tolerant {
			it.r.skip(ce)
			return
		}
		it.err = ce
		return
	}
	it.stream = &b.lc
}

// Close ends the iteration: Next returns false from then on. It stops
// the workers (Filter.Workers), so it is needed only when the iteration
// stops before Next returned false. The current record stays valid.
func (it *Iterator) Close() {
	it.pos, it.entries, it.ei, it.stream = len(it.plan), it.entries[:0], 0, nil
	if pf := it.ahead; pf != nil {
		close(pf.stop)
		pf.wg.Wait()
		it.ahead = nil
	}
}
