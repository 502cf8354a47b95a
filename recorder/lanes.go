package recorder

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Two lanes lead to the log writer: bulk, for channels of large payloads
// (camera frames), and small, for everything else (states, clock probes,
// fed records). When the writer is slower than the stream, hundreds of MB
// of frames wait for it: in one queue, a state received now would reach
// the log seconds later, and a kill -9 would lose those seconds of states
// where the log promises about a FlushInterval. So the writer serves the
// small lane first (write): a small record waits at most smallWait plus
// the writing of one bulk record, whatever the frames' backlog.
//
// Each channel stays in receive order: a channel is in one lane at a time
// and moves only from small to bulk (at its first record of bulkMin bytes
// or more), for good, and the writer writes a channel's waiting small
// records before its first bulk one. Across channels the file is then no
// longer in receive order (new states ahead of older frames); readers
// order records by RecvMonoNs (docs/log-format.md §10), and the writer
// seals the open chunk where it switches lanes while bulk records wait
// (the writer is behind) or with a jump in time (sealJump), so that chunks
// of the two lanes do not overlap in time and readers merge few of them,
// and small records never share a chunk with frames waiting to be
// compressed; the chunk of small records is sealed ahead
// (logfmt.Writer.SealAhead): written as soon as the log writer is between
// two blocks, not after the frames' chunks still being compressed, which
// at a slow zstd level hold seconds of frames.
type lanes struct {
	small, bulk chan batch
	mu          sync.Mutex
	big         map[string]bool // channels in the bulk lane
	one         bool            // everything in the bulk lane: write order is receive order
	wait        time.Duration   // smallWait (tests: 0)
	queued      atomic.Int64    // bytes of the samples in the lanes: the writer's backlog
}

const (
	// bulkMin is the record size that moves a channel to the bulk lane:
	// logfmt.ZeroCopyMin, the size from which the writer treats payloads
	// as large.
	bulkMin = 64 << 10
	// smallWait is how long small records may wait for the writer while
	// it works through a bulk backlog: they are written in batches, so
	// the lane switches (and chunks) stay few.
	smallWait = 100 * time.Millisecond
	// sealJump: a lane switch whose records are further apart in time
	// than this seals the open chunk first.
	sealJump = 100 * time.Millisecond
)

// newLanes: with one set (snapshot mode, whose windows close on the stamps
// of the records written), every record takes the bulk lane.
func newLanes(one bool) *lanes {
	return &lanes{small: make(chan batch, 1024), bulk: make(chan batch, 64), big: map[string]bool{}, one: one, wait: smallWait}
}

// split sorts b into its lanes, keeping each lane's samples in order: a
// channel failure goes small, a stream's end follows its channel's
// samples.
func (l *lanes) split(b batch) (small, bulk batch) {
	if l.one {
		return batch{}, b
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case b.failed != nil:
		return b, batch{}
	case b.end != nil && l.big[b.end.name]:
		return batch{}, b
	case b.end != nil:
		return b, batch{}
	}
	nbulk := 0
	for i := range b.samples {
		s := &b.samples[i]
		if len(s.rec.Header)+len(s.rec.Payload) >= bulkMin {
			l.big[s.name] = true
		}
		if l.big[s.name] {
			nbulk++
		}
	}
	switch nbulk {
	case 0:
		return b, batch{}
	case len(b.samples):
		return batch{}, b
	}
	small.samples, bulk.samples = make([]sample, 0, len(b.samples)-nbulk), make([]sample, 0, nbulk)
	for _, s := range b.samples {
		if l.big[s.name] {
			bulk.samples = append(bulk.samples, s)
		} else {
			small.samples = append(small.samples, s)
		}
	}
	return small, bulk
}

// size is the bytes of b's samples.
func (b batch) size() int64 {
	var n int64
	for i := range b.samples {
		n += int64(len(b.samples[i].rec.Header) + len(b.samples[i].rec.Payload))
	}
	return n
}

func (b batch) empty() bool { return len(b.samples) == 0 && b.failed == nil && b.end == nil }

// put hands a batch to the writer, blocking while its lane is full (the
// writer takes batches until every sender is done).
func (l *lanes) put(b batch) {
	small, bulk := l.split(b)
	if !small.empty() {
		l.queued.Add(small.size())
		l.small <- small
	}
	if !bulk.empty() {
		l.queued.Add(bulk.size())
		l.bulk <- bulk
	}
}

// send is put that gives up when ctx ends; false then.
func (l *lanes) send(ctx context.Context, b batch) bool {
	small, bulk := l.split(b)
	return l.sendTo(ctx, l.small, small) && l.sendTo(ctx, l.bulk, bulk)
}

func (l *lanes) sendTo(ctx context.Context, ch chan<- batch, b batch) bool {
	if b.empty() {
		return true
	}
	n := b.size()
	l.queued.Add(n)
	select {
	case ch <- b:
		return true
	case <-ctx.Done():
		l.queued.Add(-n)
		return false
	}
}

// took says the writer took b out of its lane.
func (l *lanes) took(b batch) { l.queued.Add(-b.size()) }

// close ends both lanes (every sender is done).
func (l *lanes) close() {
	close(l.small)
	close(l.bulk)
}
