package logfmt

import (
	"fmt"
	"sort"
)

// Filter selects records.
type Filter struct {
	// Channels selects channels; nil or empty means all.
	Channels []uint16
	// Start and End bound RecvMonoNs to [Start, End): the receive order
	// of the recorder, monotonic within a recording. Zero means
	// unbounded. Convert wall time with a record's RecvWallNs-RecvMonoNs
	// or a chunk's wall range.
	Start, End int64
	// MetaOnly reads record metadata only: payload blocks are neither
	// read nor decompressed; Header and Payload are nil, HeaderLen and
	// PayloadLen are set.
	MetaOnly bool
}

// Iterator walks records in RecvMonoNs order (ties in file order).
type Iterator struct {
	r       *Reader
	f       Filter
	want    []bool // by channel id, nil = all
	plan    []int  // chunk indices, by time
	pos     int
	slots   []*loadedChunk
	nslots  int
	entries []metaEntry
	ei      int
	rec     Record
	err     error
}

// loadedChunk holds one chunk's buffers while its records are iterated.
type loadedChunk struct {
	buf      []byte // block header + meta section
	cm       chunkMeta
	metaRaw  []byte
	metaDec  []byte
	data     [][]byte // per group raw bytes, nil if not loaded
	dataBufs [][]byte
	readBuf  []byte
	gs       []groupState
}

// Records returns an iterator over the records selected by f. Chunks
// before f.Start are found by binary search over the index.
func (r *Reader) Records(f Filter) *Iterator {
	it := &Iterator{r: r, f: f}
	if r.closed.Load() {
		it.err = ErrClosed
		return it
	}
	if len(f.Channels) > 0 {
		it.want = make([]bool, 1<<16)
		for _, c := range f.Channels {
			it.want[c] = true
		}
	}
	p := 0
	if f.Start != 0 {
		p = sort.Search(len(r.order), func(i int) bool { return r.prefixMax[i] >= f.Start })
	}
	for ; p < len(r.order); p++ {
		ci := &r.chunks[r.order[p]]
		if f.End != 0 && ci.MinMonoNs >= f.End {
			break
		}
		if ci.MaxMonoNs < f.Start && f.Start != 0 {
			continue
		}
		if it.want != nil {
			hit := false
			for _, cc := range ci.Channels {
				hit = hit || it.want[cc.Channel]
			}
			if !hit {
				continue
			}
		}
		it.plan = append(it.plan, r.order[p])
	}
	return it
}

// Next advances to the next record; it returns false at the end or on an
// error (see Err).
func (it *Iterator) Next() bool {
	f := &it.f
	for {
		for it.ei < len(it.entries) {
			e := &it.entries[it.ei]
			it.ei++
			lc := it.slots[e.slot]
			ch := lc.cm.groups[e.group].channel
			if it.want != nil && !it.want[ch] {
				continue
			}
			if f.Start != 0 && e.mono < f.Start {
				continue
			}
			if f.End != 0 && e.mono >= f.End {
				continue
			}
			it.fill(e, lc, ch)
			return true
		}
		if it.err != nil || it.pos >= len(it.plan) {
			return false
		}
		it.loadCluster()
	}
}

func (it *Iterator) fill(e *metaEntry, lc *loadedChunk, ch uint16) {
	r := &it.rec
	*r = Record{Channel: ch, RecvWallNs: e.wall, RecvMonoNs: e.mono, CaptureNs: e.capture, Seq: e.seq,
		HasStamp: e.flags&rfStamp != 0, HasPubSN: e.flags&rfPubSN != 0, PublisherSN: e.sn,
		HeaderLen: int(e.hdrLen), PayloadLen: int(e.payLen)}
	if e.pubLen > 0 {
		r.PublisherID = lc.metaRaw[e.pubOff : e.pubOff+e.pubLen : e.pubOff+e.pubLen]
	}
	if d := lc.data[e.group]; d != nil {
		o := e.dataOff
		if e.hdrLen > 0 {
			r.Header = d[o : o+e.hdrLen : o+e.hdrLen]
		}
		o += e.hdrLen
		r.Payload = d[o : o+e.payLen : o+e.payLen]
	}
}

// Record returns the current record, valid until the next call to Next.
func (it *Iterator) Record() *Record { return &it.rec }

// Err returns the error that stopped the iteration, if any. In tolerant
// mode damaged chunks are skipped and listed by Reader.SkippedChunks.
func (it *Iterator) Err() error { return it.err }

// loadCluster loads the next chunk, together with the following chunks
// whose time ranges overlap it, and orders their records by time.
func (it *Iterator) loadCluster() {
	r := it.r
	it.entries = it.entries[:0]
	it.ei = 0
	it.nslots = 0
	first := it.pos
	end := r.chunks[it.plan[it.pos]].MaxMonoNs
	needSort := false
	for it.pos < len(it.plan) && (it.pos == first || r.chunks[it.plan[it.pos]].MinMonoNs < end) &&
		it.nslots < r.opts.MaxMergeChunks {
		ci := &r.chunks[it.plan[it.pos]]
		it.pos++
		end = max(end, ci.MaxMonoNs)
		if it.nslots == len(it.slots) {
			it.slots = append(it.slots, &loadedChunk{})
		}
		lc := it.slots[it.nslots]
		n := len(it.entries)
		var err error
		it.entries, err = r.loadChunk(lc, ci, it.want, it.f.MetaOnly, it.entries, uint16(it.nslots))
		if err != nil {
			it.entries = it.entries[:n]
			ce := asCorruption(err, r.opts.Name)
			if !r.opts.Tolerant {
				it.err = ce
				return
			}
			r.skip(ce)
			continue
		}
		if !ci.Sorted || it.nslots > 0 {
			needSort = true
		}
		it.nslots++
	}
	if needSort {
		sort.SliceStable(it.entries, func(a, b int) bool { return it.entries[a].mono < it.entries[b].mono })
	}
}

// loadChunk reads and checks one chunk and appends its decoded record
// metadata to out; unless metaOnly it also reads the payload blocks of
// the wanted channels (all if want is nil).
func (r *Reader) loadChunk(lc *loadedChunk, ci *ChunkInfo, want []bool, metaOnly bool, out []metaEntry, slot uint16) ([]metaEntry, error) {
	o := &r.opts
	name := o.Name
	n := blockHeaderSize + int(ci.MetaLen)
	if int64(ci.MetaLen) > o.MaxChunkSize || int64(ci.DataLen) > o.MaxChunkSize {
		return out, corrupt(name, ci.Offset, "chunk", fmt.Sprintf("sections <= %d bytes", o.MaxChunkSize), ErrTooLarge)
	}
	if ci.Offset < 0 || ci.Offset+ci.Size() > r.size {
		return out, corrupt(name, ci.Offset, "chunk", "a chunk inside the file", ErrTornTail)
	}
	if cap(lc.buf) < n {
		lc.buf = make([]byte, n)
	}
	lc.buf = lc.buf[:n]
	if _, err := r.ReadAt(lc.buf, ci.Offset); err != nil {
		return out, fmt.Errorf("%s: read chunk at %d: %w", name, ci.Offset, err)
	}
	h, err := parseBlockHeader(lc.buf)
	if err != nil {
		return out, corrupt(name, ci.Offset, "chunk block header", "a valid block header", err)
	}
	if h.kind != kindChunk || h.metaLen != ci.MetaLen || h.dataLen != ci.DataLen {
		return out, corrupt(name, ci.Offset, "chunk block header", fmt.Sprintf("chunk with sections %d+%d (index)", ci.MetaLen, ci.DataLen), ErrMalformed)
	}
	meta := lc.buf[blockHeaderSize:]
	if crc(meta) != h.metaCRC {
		return out, corrupt(name, ci.Offset+blockHeaderSize, "chunk meta section", fmt.Sprintf("crc32c %#08x", h.metaCRC), ErrBadCRC)
	}
	if err := parseChunkMeta(meta, h.dataLen, o, &lc.cm); err != nil {
		return out, corrupt(name, ci.Offset+blockHeaderSize, "chunk meta section", "", err)
	}
	metaAt := ci.Offset + blockHeaderSize + int64(len(meta)-len(lc.cm.metaStored))
	raw, err := r.decompress(lc.cm.metaKind, lc.cm.metaStored, lc.cm.metaRawLen, lc.metaDec)
	if lc.cm.metaKind != CompressionNone && raw != nil {
		lc.metaDec = raw
	}
	if err != nil {
		return out, corrupt(name, metaAt, "chunk record metadata", "", err)
	}
	lc.metaRaw = raw
	start := len(out)
	out, lc.gs, err = decodeRecords(raw, &lc.cm, o.MaxRecordSize, lc.gs, out)
	if err != nil {
		return out[:start], corrupt(name, metaAt, "chunk record metadata", "", err)
	}
	for i := start; i < len(out); i++ {
		out[i].slot = slot
	}
	ng := len(lc.cm.groups)
	if cap(lc.data) < ng {
		lc.data = make([][]byte, ng)
	}
	lc.data = lc.data[:ng]
	clear(lc.data)
	if metaOnly {
		return out, nil
	}
	for len(lc.dataBufs) < ng {
		lc.dataBufs = append(lc.dataBufs, nil)
	}
	dataAt := ci.Offset + blockHeaderSize + int64(h.metaLen)
	for i := range lc.cm.groups {
		g := &lc.cm.groups[i]
		if want != nil && !want[g.channel] {
			continue
		}
		at := dataAt + int64(g.dataOff)
		what := fmt.Sprintf("payload block of channel %d", g.channel)
		var stored []byte
		if g.kind == CompressionNone {
			if cap(lc.dataBufs[i]) < int(g.storedLen) {
				lc.dataBufs[i] = make([]byte, g.storedLen)
			}
			stored = lc.dataBufs[i][:g.storedLen]
		} else {
			if cap(lc.readBuf) < int(g.storedLen) {
				lc.readBuf = make([]byte, g.storedLen)
			}
			stored = lc.readBuf[:g.storedLen]
		}
		if _, err := r.ReadAt(stored, at); err != nil {
			return out[:start], fmt.Errorf("%s: read %s at %d: %w", name, what, at, err)
		}
		if crc(stored) != g.crc {
			return out[:start], corrupt(name, at, what, fmt.Sprintf("crc32c %#08x", g.crc), ErrBadCRC)
		}
		d, err := r.decompress(g.kind, stored, g.rawLen, lc.dataBufs[i])
		if err != nil {
			return out[:start], corrupt(name, at, what, "", err)
		}
		if g.kind != CompressionNone {
			lc.dataBufs[i] = d
		}
		lc.data[i] = d
		if d == nil {
			lc.data[i] = []byte{}
		}
	}
	return out, nil
}
