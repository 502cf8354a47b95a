package recorder

import (
	"context"
	"sync"
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
	small, bulk chan []item
	mu          sync.Mutex
	big         map[string]bool // channels in the bulk lane
	one         bool            // everything in the bulk lane: write order is receive order
	wait        time.Duration   // smallWait (tests: 0)
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
	return &lanes{small: make(chan []item, 1024), bulk: make(chan []item, 64), big: map[string]bool{}, one: one, wait: smallWait}
}

// split sorts batch into its lanes, keeping each lane's items in order.
func (l *lanes) split(batch []item) (small, bulk []item) {
	if l.one {
		return nil, batch
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	nbulk := 0
	for i := range batch {
		it := &batch[i]
		if !it.failed && it.drainEnds == nil && len(it.rec.Header)+len(it.rec.Payload) >= bulkMin {
			l.big[it.name] = true
		}
		if l.big[it.name] {
			nbulk++
		}
	}
	switch nbulk {
	case 0:
		return batch, nil
	case len(batch):
		return nil, batch
	}
	small, bulk = make([]item, 0, len(batch)-nbulk), make([]item, 0, nbulk)
	for _, it := range batch {
		if l.big[it.name] {
			bulk = append(bulk, it)
		} else {
			small = append(small, it)
		}
	}
	return small, bulk
}

// put hands a batch to the writer, blocking while its lane is full (the
// writer takes batches until every sender is done).
func (l *lanes) put(batch []item) {
	small, bulk := l.split(batch)
	if len(small) > 0 {
		l.small <- small
	}
	if len(bulk) > 0 {
		l.bulk <- bulk
	}
}

// send is put that gives up when ctx ends; false then.
func (l *lanes) send(ctx context.Context, batch []item) bool {
	small, bulk := l.split(batch)
	return sendTo(ctx, l.small, small) && sendTo(ctx, l.bulk, bulk)
}

func sendTo(ctx context.Context, ch chan<- []item, b []item) bool {
	if len(b) == 0 {
		return true
	}
	select {
	case ch <- b:
		return true
	case <-ctx.Done():
		return false
	}
}

// close ends both lanes (every sender is done).
func (l *lanes) close() {
	close(l.small)
	close(l.bulk)
}
