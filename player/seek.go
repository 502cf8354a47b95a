package player

import (
	"context"
	"time"
)

// Seeker is a Source that can begin a pass at a log time: what a seek
// needs (the reader restarts there).
type Seeker interface {
	Source
	// PassFrom is Pass from the first record whose Key is at or after from.
	PassFrom(ctx context.Context, from int64, emit func(*Rec) bool) error
}

// passStats is one pass's bookkeeping (pull), kept for the pass before
// the current one: a seek goes back to the pass of the last published
// record even when the next pass's first records were already read.
type passStats struct {
	pass                int
	offset, first, last int64
	count               uint64
}

// seek moves the position to at (log time from Origin, ns) in the pass of
// the last published record: the reader restarts there, what was read
// ahead is dropped, and the next record is the first at or after at. A
// playing replay goes on from there at once (the next record is due after
// its gap to at); a paused one resumes from there. The faults' state that
// follows the stream (jitter and lag ordering, restart renumbering) starts
// afresh; the drop and jitter draws go on where they were.
func (r *run) seek(at, now int64) {
	r.stopReader()
	r.h = r.h[:0]
	if r.havePass && r.pass != r.pubPass && r.prevPass.pass == r.pubPass {
		p := r.prevPass
		r.pass, r.passOffset, r.passFirst, r.passLast, r.passCount = p.pass, p.offset, p.first, p.last, p.count
	}
	r.inputDone, r.inErr, r.pulled = false, nil, 0
	clear(r.haveLastE)
	clear(r.reseq)
	clear(r.resn)
	key := r.origin + at
	r.startReader(r.pass, key, true)
	r.lastPubE, r.havePos = key+r.passOffset, true
	if r.anchored && !r.paused {
		r.anchorKey, r.anchorMono = r.lastPubE, now
	}
	r.held, r.seeks = false, r.seeks+1
	r.setStatus(func(s *Status) { s.Position = time.Duration(at) })
}
