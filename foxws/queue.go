package foxws

// A client's data queue: two FIFO lanes, small messages (states, poses,
// JSON, time) and bulk ones (frames), one byte budget for both. The writer
// takes the oldest message of the two lanes (by a sequence number), so a
// client sees messages in the order they were published. When a message
// does not fit, the oldest frames are dropped first; a frame is dropped
// itself when no older frame is left to make room; small messages are
// dropped (oldest first) only when no frame is queued at all. Each drop
// is counted for the client and its channel (onDrop).

// entry is one queued message: its bytes are shared by every client's
// queue and never written to.
type entry struct {
	seq     uint64
	ch      *fchannel // nil: a time message
	logTime uint64
	body    []byte // the message (a channel's), or the whole time message
}

func (e *entry) size() int { return len(e.body) + messageDataHead }

// fifo is a queue of entries on a slice.
type fifo struct {
	buf  []entry
	head int
}

func (f *fifo) len() int { return len(f.buf) - f.head }

func (f *fifo) push(e entry) {
	if f.head > 0 && f.head >= len(f.buf)/2 { // compact: memory stays at about twice the longest queue
		n := copy(f.buf, f.buf[f.head:])
		clear(f.buf[n:])
		f.buf, f.head = f.buf[:n], 0
	}
	f.buf = append(f.buf, e)
}

func (f *fifo) front() *entry { return &f.buf[f.head] }

func (f *fifo) pop() entry {
	e := f.buf[f.head]
	f.buf[f.head] = entry{} // drop the reference to the shared bytes
	f.head++
	if f.head == len(f.buf) {
		f.buf, f.head = f.buf[:0], 0
	}
	return e
}

func (f *fifo) reset() {
	clear(f.buf)
	f.buf, f.head = f.buf[:0], 0
}

// queue is a client's data queue; its owner locks it.
type queue struct {
	small, bulk fifo
	bytes       int // queued, both lanes
	limit       int // bytes
	maxSmall    int // entries in the small lane
	seq         uint64
	onDrop      func(e *entry)
}

func newQueue(limit, maxSmall int, onDrop func(*entry)) *queue {
	return &queue{limit: limit, maxSmall: maxSmall, onDrop: onDrop}
}

// push queues e (bulk: a frame), dropping what the budget says; false when
// e itself was dropped.
func (q *queue) push(e entry, bulk bool) bool {
	n := e.size()
	for q.bytes+n > q.limit && q.bulk.len() > 0 {
		q.drop(&q.bulk)
	}
	for !bulk && (q.bytes+n > q.limit || q.small.len() >= q.maxSmall) && q.small.len() > 0 {
		q.drop(&q.small)
	}
	if q.bytes+n > q.limit && q.bytes > 0 { // a message larger than the budget still goes alone
		q.onDrop(&e)
		return false
	}
	e.seq = q.seq
	q.seq++
	q.bytes += n
	if bulk {
		q.bulk.push(e)
	} else {
		q.small.push(e)
	}
	return true
}

func (q *queue) drop(f *fifo) {
	e := f.pop()
	q.bytes -= e.size()
	q.onDrop(&e)
}

// pop takes the oldest entry of both lanes; false when both are empty.
func (q *queue) pop() (entry, bool) {
	var f *fifo
	switch {
	case q.small.len() > 0 && q.bulk.len() > 0:
		f = &q.small
		if q.bulk.front().seq < q.small.front().seq {
			f = &q.bulk
		}
	case q.small.len() > 0:
		f = &q.small
	case q.bulk.len() > 0:
		f = &q.bulk
	default:
		return entry{}, false
	}
	e := f.pop()
	q.bytes -= e.size()
	return e, true
}

// clear empties the queue without counting drops (a seek made what was
// queued stale).
func (q *queue) clear() {
	q.small.reset()
	q.bulk.reset()
	q.bytes = 0
}
