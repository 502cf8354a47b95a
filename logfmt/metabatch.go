// Record metadata in batches, column by column (Iterator.NextBatch): a
// metadata-only reader that keeps books per record (analyze) reads a
// streamed chunk's records straight into reused columns, without a
// metaEntry and a Record per record in between.

package logfmt

import "fmt"

// MetaBatch is the metadata of up to BatchLen records, one column per
// field: record i is Channel[i], RecvWallNs[i], ... Columns past Len are
// stale. A batch and the publisher ids it holds are valid until the
// next call to NextBatch; reuse one batch for a whole iteration.
type MetaBatch struct {
	Len         int
	Channel     []uint16
	Flags       []uint8 // MetaStamp, MetaPubSN
	RecvWallNs  []int64
	RecvMonoNs  []int64
	CaptureNs   []int64  // valid if Flags[i]&MetaStamp
	Seq         []uint64 // valid if Flags[i]&MetaStamp
	PublisherSN []uint64 // valid if Flags[i]&MetaPubSN
	Bytes       []uint32 // header + payload length
	pubOff      []uint32 // publisher id in pubs (pubLen 0: none)
	pubLen      []uint32
	pubs        []byte
	own         []byte // publisher ids of records copied from entries
}

// MetaBatch flags.
const (
	MetaStamp = rfStamp // CaptureNs and Seq are set (Record.HasStamp)
	MetaPubSN = rfPubSN // PublisherSN is set (Record.HasPubSN)
)

// BatchLen is the most records a MetaBatch holds.
const BatchLen = streamBatch

func (b *MetaBatch) init() {
	if len(b.Channel) == BatchLen {
		return
	}
	*b = MetaBatch{Channel: make([]uint16, BatchLen), Flags: make([]uint8, BatchLen),
		RecvWallNs: make([]int64, BatchLen), RecvMonoNs: make([]int64, BatchLen), CaptureNs: make([]int64, BatchLen),
		Seq: make([]uint64, BatchLen), PublisherSN: make([]uint64, BatchLen), Bytes: make([]uint32, BatchLen),
		pubOff: make([]uint32, BatchLen), pubLen: make([]uint32, BatchLen)}
}

// PublisherID is record i's publisher identity (nil if none), valid
// until the next NextBatch.
func (b *MetaBatch) PublisherID(i int) []byte {
	if b.pubLen[i] == 0 {
		return nil
	}
	o, l := b.pubOff[i], b.pubLen[i]
	return b.pubs[o : o+l : o+l]
}

// PublisherKey is the place of record i's publisher id in b: records of
// one batch with the same key have the same id (most of a channel's
// records repeat the one before), so a caller that keeps the last id
// compares bytes only when the key or the batch changes.
func (b *MetaBatch) PublisherKey(i int) uint64 { return uint64(b.pubOff[i])<<32 | uint64(b.pubLen[i]) }

// Record sets r to record i as Iterator.Record gives it in MetaOnly mode
// (no Header or Payload; HeaderLen is 0 and PayloadLen the two lengths'
// sum, which is all a batch keeps).
func (b *MetaBatch) Record(i int, r *Record) {
	*r = Record{Channel: b.Channel[i], RecvWallNs: b.RecvWallNs[i], RecvMonoNs: b.RecvMonoNs[i],
		HasStamp: b.Flags[i]&MetaStamp != 0, HasPubSN: b.Flags[i]&MetaPubSN != 0, PublisherID: b.PublisherID(i),
		PayloadLen: int(b.Bytes[i])}
	if r.HasStamp {
		r.CaptureNs, r.Seq = b.CaptureNs[i], b.Seq[i]
	}
	if r.HasPubSN {
		r.PublisherSN = b.PublisherSN[i]
	}
}

// NextBatch reads the metadata of the next records into b (at most
// BatchLen, at least one), as Next would give them one by one: the same
// records, filters and errors. It returns false at the end or on an
// error (Err). Records a streamed chunk holds are decoded into b's
// columns directly; others (chunks merged by time) are copied from the
// iteration's entries. Do not mix it with Next on one iterator. The
// payloads are not read whatever Filter.MetaOnly says.
func (it *Iterator) NextBatch(b *MetaBatch) bool {
	b.init()
	b.Len, b.pubs, b.own = 0, nil, b.own[:0]
	f := &it.f
	for {
		for it.ei < len(it.entries) && b.Len < BatchLen {
			e := &it.entries[it.ei]
			it.ei++
			if (it.want != nil && !it.want[e.channel]) || (f.Start != 0 && e.mono < f.Start) ||
				(f.End != 0 && e.mono >= f.End) || (it.wall && !f.Wall.Contains(e.wall)) {
				continue
			}
			b.addEntry(e, it.slots[e.slot].metaRaw)
		}
		if b.Len > 0 {
			return true
		}
		if it.stream != nil {
			it.streamBatch(b)
			if b.Len > 0 {
				return true
			}
			continue
		}
		if it.err != nil || it.pos >= len(it.plan) {
			it.Close()
			return false
		}
		if it.ahead != nil {
			it.takeAhead()
			continue
		}
		it.loadCluster()
	}
}

// addEntry appends the record of e, its publisher id copied from raw
// (entries may come from several chunks).
func (b *MetaBatch) addEntry(e *metaEntry, raw []byte) {
	i := b.Len
	b.Len++
	b.Channel[i], b.Flags[i] = e.channel, e.flags&(MetaStamp|MetaPubSN)
	b.RecvWallNs[i], b.RecvMonoNs[i], b.CaptureNs[i], b.Seq[i], b.PublisherSN[i] = e.wall, e.mono, e.capture, e.seq, e.sn
	b.Bytes[i] = e.hdrLen + e.payLen
	b.pubOff[i], b.pubLen[i] = uint32(len(b.own)), e.pubLen
	if e.pubLen > 0 {
		b.own = append(b.own, raw[e.pubOff:e.pubOff+e.pubLen]...)
	}
	b.pubs = b.own
}

// streamBatch decodes the streamed chunk's next records into b, as
// nextBatch decodes them into entries: the same batches of streamBatch
// records, so that an error drops the same records.
func (it *Iterator) streamBatch(b *MetaBatch) {
	lc := it.stream
	f := &it.f
	err := lc.dec.decodeColumns(b, it.want, f.Start, f.End)
	if lc.dec.done() {
		it.stream = nil
	}
	b.pubs = lc.metaRaw
	if it.wall {
		n := 0
		for i := range b.Len {
			if f.Wall.Contains(b.RecvWallNs[i]) {
				b.move(n, i)
				n++
			}
		}
		b.Len = n
	}
	if err != nil {
		b.Len = 0
		it.err = asCorruption(lc.decodeError(it.r.opts.Name, err), it.r.opts.Name)
	}
}

// move copies record i to n (n <= i).
func (b *MetaBatch) move(n, i int) {
	b.Channel[n], b.Flags[n] = b.Channel[i], b.Flags[i]
	b.RecvWallNs[n], b.RecvMonoNs[n], b.CaptureNs[n], b.Seq[n], b.PublisherSN[n] = b.RecvWallNs[i], b.RecvMonoNs[i], b.CaptureNs[i], b.Seq[i], b.PublisherSN[i]
	b.Bytes[n], b.pubOff[n], b.pubLen[n] = b.Bytes[i], b.pubOff[i], b.pubLen[i]
}

// decodeColumns is decode (chunkdecoder.go) writing the next streamBatch
// records into b's columns, the records a filter leaves out (want by
// channel, [start, end) of RecvMonoNs; 0: unbounded) decoded and checked
// but not kept. Its checks and errors are decode's, in the same order;
// TestDecodeColumnsIsDecode holds the two to that.
func (d *recordDecoder) decodeColumns(b *MetaBatch, want []bool, start, end int64) error {
	raw, cm, gs, maxRecord := d.raw, d.cm, d.gs, d.maxRecord
	ng := len(gs)
	prevMono, prevOff, n, p := d.prevMono, d.prevOff, d.n, d.p
	// The columns, resliced to the batch: no bounds checks on j below.
	chans, flagc, walls, monos := b.Channel[:BatchLen], b.Flags[:BatchLen], b.RecvWallNs[:BatchLen], b.RecvMonoNs[:BatchLen]
	caps, seqs, sns, bytesc := b.CaptureNs[:BatchLen], b.Seq[:BatchLen], b.PublisherSN[:BatchLen], b.Bytes[:BatchLen]
	pubOffs, pubLens := b.pubOff[:BatchLen], b.pubLen[:BatchLen]
	filtered := want != nil || start != 0 || end != 0
	j := 0
	for r := 0; p < len(raw); r++ {
		if r == BatchLen {
			b.Len = j
			d.prevMono, d.prevOff, d.n, d.p = prevMono, prevOff, n, p
			return nil
		}
		if n >= cm.records {
			b.Len = j
			return d.stop(badRecord(n, "more records than the chunk prefix says"))
		}
		gi, k := uvarintWord(word8(raw, p))
		if k == 0 {
			gi, k = uvarintSlow(raw[p:])
		}
		if k <= 0 || gi >= uint64(ng) {
			b.Len = j
			return d.stop(badRecord(n, "payload block index"))
		}
		p += k
		if p >= len(raw) {
			b.Len = j
			return d.stop(badRecord(n, "truncated"))
		}
		flags := raw[p]
		p++
		if flags&^rfKnown != 0 || flags&(rfPubID|rfPubSame) == rfPubID|rfPubSame {
			b.Len = j
			return d.stop(badRecord(n, "flags"))
		}
		g := &gs[gi]
		udm, k := uvarintWord(word8(raw, p))
		if k == 0 {
			udm, k = uvarintSlow(raw[p:])
		}
		dm := zigzag(udm)
		if k <= 0 {
			b.Len = j
			return d.stop(badRecord(n, "mono delta"))
		}
		p += k
		udo, k := uvarintWord(word8(raw, p))
		if k == 0 {
			udo, k = uvarintSlow(raw[p:])
		}
		do := zigzag(udo)
		if k <= 0 {
			b.Len = j
			return d.stop(badRecord(n, "wall delta"))
		}
		p += k
		mono := prevMono + dm
		off := prevOff + do
		wall := mono + off
		if cm.sorted && n > 0 && mono < prevMono {
			b.Len = j
			return d.stop(badRecord(n, "out of order in a chunk marked sorted"))
		}
		prevMono, prevOff = mono, off
		monos[j], walls[j] = mono, wall
		if flags&rfStamp != 0 {
			udc, k := uvarintWord(word8(raw, p))
			if k == 0 {
				udc, k = uvarintSlow(raw[p:])
			}
			dc := zigzag(udc)
			if k <= 0 {
				b.Len = j
				return d.stop(badRecord(n, "capture delta"))
			}
			p += k
			uds, k := uvarintWord(word8(raw, p))
			if k == 0 {
				uds, k = uvarintSlow(raw[p:])
			}
			ds := zigzag(uds)
			if k <= 0 {
				b.Len = j
				return d.stop(badRecord(n, "seq delta"))
			}
			p += k
			seq := g.prevSeq + 1 + uint64(ds)
			g.prevSeq = seq
			caps[j], seqs[j] = wall+dc, seq
		}
		var pubOff, pubLen uint32
		switch {
		case flags&rfPubID != 0:
			l, k := uvarintWord(word8(raw, p))
			if k == 0 {
				l, k = uvarintSlow(raw[p:])
			}
			if k <= 0 || l == 0 || l > MaxPublisherID || l > uint64(len(raw)-p-k) {
				b.Len = j
				return d.stop(badRecord(n, "publisher id"))
			}
			p += k
			g.pubOff, g.pubLen, g.havePub = uint32(p), uint32(l), true
			p += int(l)
			pubOff, pubLen = g.pubOff, g.pubLen
		case flags&rfPubSame != 0:
			if !g.havePub {
				b.Len = j
				return d.stop(badRecord(n, "repeated publisher id without a first one"))
			}
			pubOff, pubLen = g.pubOff, g.pubLen
		}
		pubOffs[j], pubLens[j] = pubOff, pubLen
		if flags&rfPubSN != 0 {
			uds, k := uvarintWord(word8(raw, p))
			if k == 0 {
				uds, k = uvarintSlow(raw[p:])
			}
			ds := zigzag(uds)
			if k <= 0 {
				b.Len = j
				return d.stop(badRecord(n, "publisher sn delta"))
			}
			p += k
			sn := g.prevSN + 1 + uint64(ds)
			g.prevSN = sn
			sns[j] = sn
		}
		var hl uint64
		if flags&rfHeader != 0 {
			hl, k = uvarintWord(word8(raw, p))
			if k == 0 {
				hl, k = uvarintSlow(raw[p:])
			}
			if k <= 0 || hl == 0 {
				b.Len = j
				return d.stop(badRecord(n, "header length"))
			}
			p += k
		}
		pl, k := uvarintWord(word8(raw, p))
		if k == 0 {
			pl, k = uvarintSlow(raw[p:])
		}
		if k <= 0 {
			b.Len = j
			return d.stop(badRecord(n, "payload length"))
		}
		p += k
		if hl > uint64(maxRecord) || pl > uint64(maxRecord) || hl+pl > uint64(maxRecord) {
			b.Len = j
			return d.stop(fmt.Errorf("%w: record %d of %d bytes", ErrTooLarge, n, hl+pl))
		}
		grp := &cm.groups[gi]
		if g.cursor+hl+pl > uint64(grp.rawLen) {
			b.Len = j
			return d.stop(badRecord(n, "payload runs past its block"))
		}
		g.cursor += hl + pl
		chans[j], flagc[j], bytesc[j] = grp.channel, flags&(MetaStamp|MetaPubSN), uint32(hl+pl)
		g.n++
		n++
		if !filtered || ((want == nil || want[grp.channel]) && (start == 0 || mono >= start) && (end == 0 || mono < end)) {
			j++
		}
	}
	b.Len = j
	d.prevMono, d.prevOff, d.n, d.p = prevMono, prevOff, n, len(raw)+1 // done
	if n != cm.records {
		return fmt.Errorf("%w: %d records, chunk prefix says %d", ErrMalformed, n, cm.records)
	}
	for i := range gs {
		if gs[i].n != cm.groups[i].records || gs[i].cursor != uint64(cm.groups[i].rawLen) {
			return fmt.Errorf("%w: payload block %d: records or bytes disagree with the directory", ErrMalformed, i)
		}
	}
	return nil
}
