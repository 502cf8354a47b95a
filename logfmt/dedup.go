package logfmt

// DedupWindow is how far apart, on the merge's receive wall clock (after
// Restamp), two inputs' copies of one sample may be received and still be
// found to be one: two recorders of one stream receive a sample within
// milliseconds of each other, a backlogged one within seconds.
const DedupWindow = int64(10e9)

// sampleKey identifies one sample of an output channel: its publisher and
// its simulator stamps (seq and capture time), or, without them, its
// publisher's zenoh sequence number.
type sampleKey struct {
	def     int
	pub     string
	seq     uint64
	capture int64
	bySN    bool
}

// firstCopy is which input a sample came from first, and when.
type firstCopy struct {
	input int
	wall  int64
}

// dedup finds the second copies of samples within a merge: a record of a
// channel two inputs hold (two recorders of one stream, on one host or
// two), whose key an other input's record had within DedupWindow before
// it, is the same sample received twice. Copies within one input are
// kept: a publisher that sends a sample twice is what analyze's dups
// measure, and each recorder saw it.
type dedup struct {
	seen    map[sampleKey]firstCopy
	fifo    []seenAt // in merge order, for eviction
	head    int
	dropped []uint64 // per output channel
}

type seenAt struct {
	key  sampleKey
	wall int64
}

func newDedup(defs int) *dedup {
	return &dedup{seen: map[sampleKey]firstCopy{}, dropped: make([]uint64, defs)}
}

// again says whether r (of output channel def, from input) is a second
// copy, and counts it; otherwise it remembers r.
func (d *dedup) again(def, input int, r *Record) bool {
	k := sampleKey{def: def, pub: string(r.PublisherID)}
	switch {
	case r.HasStamp:
		k.seq, k.capture = r.Seq, r.CaptureNs
	case r.HasPubSN:
		k.seq, k.bySN = r.PublisherSN, true
	default:
		return false // nothing tells this sample from another
	}
	d.evict(r.RecvWallNs - DedupWindow)
	if f, ok := d.seen[k]; ok {
		if f.input != input {
			d.dropped[def]++
			return true
		}
		return false
	}
	d.seen[k] = firstCopy{input: input, wall: r.RecvWallNs}
	d.fifo = append(d.fifo, seenAt{k, r.RecvWallNs})
	return false
}

// evict forgets the samples first received before t.
func (d *dedup) evict(t int64) {
	for d.head < len(d.fifo) && d.fifo[d.head].wall < t {
		e := d.fifo[d.head]
		if f, ok := d.seen[e.key]; ok && f.wall == e.wall {
			delete(d.seen, e.key)
		}
		d.head++
	}
	if d.head > 4096 && d.head*2 > len(d.fifo) {
		d.fifo = append(d.fifo[:0], d.fifo[d.head:]...)
		d.head = 0
	}
}
