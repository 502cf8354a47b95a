package player

import (
	"sync"
)

// msg is a record owned by the player: its buffers are copies, reused
// through the queue's free list.
type msg struct {
	Rec
	pass     int
	e        int64 // effective log time: key + pass offset + shift
	base     int64 // key + pass offset
	idx      uint64
	prepared bool
	hdrBuf   []byte
	payBuf   []byte
	idBuf    []byte
}

func (m *msg) size() int { return len(m.Header) + len(m.Payload) + 128 }

// queue is the bounded read-ahead queue between the reader goroutine and
// the publishing goroutine: bounded by count, bytes and log-time horizon.
type queue struct {
	mu       sync.Mutex
	notFull  sync.Cond
	notEmpty sync.Cond
	buf      []*msg // ring
	head, n  int
	bytes    int
	maxBytes int
	horizon  int64 // max key span queued; <= 0 = unbounded
	closed   bool  // producer finished
	stopped  bool  // consumer gone
	err      error
	free     []*msg
	peakN    int
	peakB    int
}

func newQueue(maxMsgs, maxBytes int, horizon int64) *queue {
	q := &queue{buf: make([]*msg, maxMsgs), maxBytes: maxBytes, horizon: horizon}
	q.notFull.L = &q.mu
	q.notEmpty.L = &q.mu
	return q
}

// get returns a free msg holding a copy of r.
func (q *queue) get(r *Rec) *msg {
	q.mu.Lock()
	var m *msg
	if k := len(q.free); k > 0 {
		m = q.free[k-1]
		q.free = q.free[:k-1]
	}
	q.mu.Unlock()
	if m == nil {
		m = &msg{}
	}
	m.hdrBuf = append(m.hdrBuf[:0], r.Header...)
	m.payBuf = append(m.payBuf[:0], r.Payload...)
	m.idBuf = append(m.idBuf[:0], r.SourceID...)
	m.Rec = *r
	m.Header, m.Payload, m.SourceID = nil, m.payBuf, m.idBuf
	if r.Header != nil {
		m.Header = m.hdrBuf
	}
	m.prepared = false
	return m
}

// put returns m to the free list (bounded by the ring's size, so memory
// stays bounded; larger buffers than 1 MiB are not kept beyond a few).
func (q *queue) put(m *msg) {
	q.mu.Lock()
	if len(q.free) < len(q.buf) && (cap(m.payBuf) <= 1<<20 || len(q.free) < 4) {
		q.free = append(q.free, m)
	}
	q.mu.Unlock()
}

// push blocks until m fits; false if the consumer stopped.
func (q *queue) push(m *msg) bool {
	sz := m.size()
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.stopped && q.n > 0 && (q.n == len(q.buf) || q.bytes+sz > q.maxBytes ||
		(q.horizon > 0 && m.Key-q.buf[q.head].Key > q.horizon)) {
		q.notFull.Wait()
	}
	if q.stopped {
		return false
	}
	q.buf[(q.head+q.n)%len(q.buf)] = m
	q.n++
	q.bytes += sz
	q.peakN = max(q.peakN, q.n)
	q.peakB = max(q.peakB, q.bytes)
	q.notEmpty.Signal()
	return true
}

// pop blocks for the next msg; nil at the end (then err is the reader's).
func (q *queue) pop() (*msg, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.n == 0 && !q.closed {
		q.notEmpty.Wait()
	}
	if q.n == 0 {
		return nil, q.err
	}
	m := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	q.bytes -= m.size()
	q.notFull.Signal()
	return m, nil
}

// finish marks the end of input.
func (q *queue) finish(err error) {
	q.mu.Lock()
	q.closed, q.err = true, err
	q.notEmpty.Broadcast()
	q.mu.Unlock()
}

// stop releases a blocked producer: the consumer is gone.
func (q *queue) stop() {
	q.mu.Lock()
	q.stopped = true
	q.notFull.Broadcast()
	q.mu.Unlock()
}
