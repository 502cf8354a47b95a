package logfmt

import "container/heap"

// MergeKey orders the records of a Merged iteration: the key of record r
// of input i (e.g. its receive wall stamp, or its monotonic stamp moved
// onto a common clock).
type MergeKey func(input int, r *Record) int64

// MergeRestamp rewrites record r of input i in place as it is read, before
// its key is taken: e.g. puts a host's receive stamps on the simulator's
// clock, so that the merge orders by that clock.
type MergeRestamp func(input int, r *Record)

// Merged walks several iterators as one, smallest key first; ties go in
// input order, and each input keeps its own order. merge joins logs by
// receive wall time with it, replay several files by receive monotonic
// time.
type Merged struct {
	key     MergeKey
	restamp MergeRestamp // nil: records as read
	h       mergeHeap
	cur     *mergeHead // the input of the current record, advanced by Next
	err     error
	init    bool
}

type mergeHead struct {
	input int
	it    *Iterator
	key   int64
}

// Merge merges its by key. Each iterator is used by the Merged only.
func Merge(its []*Iterator, key MergeKey) *Merged { return MergeRestamped(its, nil, key) }

// MergeRestamped merges its by key, each record rewritten by restamp
// first (nil: as read). Record returns the rewritten record.
func MergeRestamped(its []*Iterator, restamp MergeRestamp, key MergeKey) *Merged {
	m := &Merged{key: key, restamp: restamp}
	for i, it := range its {
		m.h = append(m.h, &mergeHead{input: i, it: it})
	}
	return m
}

// Next advances to the next record; false at the end or on the first
// error of any input (Err).
func (m *Merged) Next() bool {
	if m.err != nil {
		return false
	}
	if !m.init {
		m.init = true
		heads := m.h[:0]
		for _, h := range m.h {
			if m.advance(h) {
				heads = append(heads, h)
			} else if m.err != nil {
				return false
			}
		}
		m.h = heads
		heap.Init(&m.h)
	} else if m.cur != nil {
		if m.advance(m.cur) {
			heap.Fix(&m.h, 0)
		} else {
			heap.Pop(&m.h)
			if m.err != nil {
				return false
			}
		}
	}
	if len(m.h) == 0 {
		m.cur = nil
		return false
	}
	m.cur = m.h[0]
	return true
}

// advance moves h to its next record; false when it is done (m.err set on
// an error).
func (m *Merged) advance(h *mergeHead) bool {
	if !h.it.Next() {
		if err := h.it.Err(); err != nil {
			m.err = err
		}
		return false
	}
	r := h.it.Record()
	if m.restamp != nil {
		m.restamp(h.input, r)
	}
	h.key = m.key(h.input, r)
	return true
}

// Record is the current record, valid until Next.
func (m *Merged) Record() *Record { return m.cur.it.Record() }

// Input is the index of the current record's iterator.
func (m *Merged) Input() int { return m.cur.input }

// Key is the current record's key.
func (m *Merged) Key() int64 { return m.cur.key }

// Err is the error that stopped the merge, if any (it names its file).
func (m *Merged) Err() error { return m.err }

type mergeHeap []*mergeHead

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key < h[j].key
	}
	return h[i].input < h[j].input
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeHead)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
