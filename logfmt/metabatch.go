// Record metadata in batches (Iterator.NextBatch): a metadata-only reader
// that keeps books per record (analyze) reads a batch of a chunk's decoded
// record metadata in place, without a Record per record. The batch is the
// iterator's own entries, as the one record decoder (recordDecoder.decode)
// writes them for Next: one decoder for both.

package logfmt

// MetaBatch is the metadata of up to BatchLen records, read with its
// methods: record i's Channel(i), RecvWallNs(i), ... A batch and the
// publisher ids it holds are valid until the next call to NextBatch;
// reuse one batch for a whole iteration.
type MetaBatch struct {
	Len   int
	rows  []metaEntry
	slots []*loadedChunk // the chunks the rows' publisher ids are in (metaEntry.slot)
}

// MetaBatch flags.
const (
	MetaStamp = rfStamp // CaptureNs and Seq are set (Record.HasStamp)
	MetaPubSN = rfPubSN // PublisherSN is set (Record.HasPubSN)
)

// BatchLen is the most records a MetaBatch holds.
const BatchLen = streamBatch

// Channel is record i's channel.
func (b *MetaBatch) Channel(i int) uint16 { return b.rows[i].channel }

// Flags are record i's MetaStamp and MetaPubSN.
func (b *MetaBatch) Flags(i int) uint8 { return b.rows[i].flags & (MetaStamp | MetaPubSN) }

// RecvWallNs and RecvMonoNs are record i's receive stamps.
func (b *MetaBatch) RecvWallNs(i int) int64 { return b.rows[i].wall }

// RecvMonoNs is record i's receive stamp on the recorder's monotonic clock.
func (b *MetaBatch) RecvMonoNs(i int) int64 { return b.rows[i].mono }

// CaptureNs and Seq are valid if Flags(i)&MetaStamp.
func (b *MetaBatch) CaptureNs(i int) int64 { return b.rows[i].capture }

// Seq is record i's sample seq, valid if Flags(i)&MetaStamp.
func (b *MetaBatch) Seq(i int) uint64 { return b.rows[i].seq }

// PublisherSN is valid if Flags(i)&MetaPubSN.
func (b *MetaBatch) PublisherSN(i int) uint64 { return b.rows[i].sn }

// Bytes is record i's header and payload length.
func (b *MetaBatch) Bytes(i int) uint32 { return b.rows[i].hdrLen + b.rows[i].payLen }

// PublisherID is record i's publisher identity (nil if none), valid
// until the next NextBatch.
func (b *MetaBatch) PublisherID(i int) []byte {
	e := &b.rows[i]
	if e.pubLen == 0 {
		return nil
	}
	return b.slots[e.slot].metaRaw[e.pubOff : e.pubOff+e.pubLen : e.pubOff+e.pubLen]
}

// PublisherKey is the place of record i's publisher id in b: records of
// one batch with the same key have the same id (most of a channel's
// records repeat the one before), so a caller that keeps the last id
// compares bytes only when the key or the batch changes.
func (b *MetaBatch) PublisherKey(i int) uint64 {
	e := &b.rows[i]
	return uint64(e.pubOff)<<32 | uint64(e.slot)<<16 | uint64(e.pubLen)
}

// Record sets r to record i as Iterator.Record gives it in MetaOnly mode
// (no Header or Payload; HeaderLen is 0 and PayloadLen the two lengths'
// sum).
func (b *MetaBatch) Record(i int, r *Record) {
	e := &b.rows[i]
	*r = Record{Channel: e.channel, RecvWallNs: e.wall, RecvMonoNs: e.mono,
		HasStamp: e.flags&MetaStamp != 0, HasPubSN: e.flags&MetaPubSN != 0, PublisherID: b.PublisherID(i),
		PayloadLen: int(e.hdrLen + e.payLen)}
	if r.HasStamp {
		r.CaptureNs, r.Seq = e.capture, e.seq
	}
	if r.HasPubSN {
		r.PublisherSN = e.sn
	}
}

// NextBatch reads the metadata of the next records into b (at most
// BatchLen, at least one), as Next would give them one by one: the same
// records, filters and errors. The records are the iterator's entries,
// those the filter leaves out dropped in place. Do not mix it with Next
// on one iterator. The payloads are not read whatever Filter.MetaOnly
// says.
func (it *Iterator) NextBatch(b *MetaBatch) bool {
	for {
		if it.ei < len(it.entries) {
			es := it.entries[it.ei:min(it.ei+BatchLen, len(it.entries))]
			it.ei += len(es)
			n := it.keep(es)
			if n > 0 {
				b.Len, b.rows, b.slots = n, es[:n], it.slots
				return true
			}
			continue
		}
		if it.stream != nil {
			it.nextBatch()
			continue
		}
		if it.err != nil || it.pos >= len(it.plan) {
			it.Close()
			b.Len, b.rows = 0, nil
			return false
		}
		if it.ahead != nil {
			it.takeAhead()
			continue
		}
		it.loadCluster()
	}
}

// keep drops in place the entries of es the filter leaves out (keeps),
// and returns how many are kept.
func (it *Iterator) keep(es []metaEntry) int {
	n := 0
	if it.wall {
		for i := range es {
			if it.keeps(&es[i]) {
				es[n] = es[i]
				n++
			}
		}
		return n
	}
	want, start, end := it.want, it.f.Start, it.f.End // in registers
	for i := range es {
		e := &es[i]
		if (want != nil && !want[e.channel]) || (start != 0 && e.mono < start) || (end != 0 && e.mono >= end) {
			continue
		}
		if n != i {
			es[n] = *e
		}
		n++
	}
	return n
}
