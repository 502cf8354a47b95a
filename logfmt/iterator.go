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
	// or a chunk's wall range, or bound Wall instead.
	Start, End int64
	// Wall bounds RecvWallNs, the recorder's wall clock (comparable
	// across recorders and hosts, and what users give times in): chunks
	// are skipped by the index's wall ranges and each record is checked.
	Wall Range
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
	wall    bool   // f.Wall bounds something
	plan    []int  // chunk indices, by time
	pos     int
	slots   []*loadedChunk
	nslots  int
	entries []metaEntry
	ei      int
	stream  *loadedChunk // chunk decoded batch by batch into entries, or nil
	rec     Record
	err     error
}

// streamBatch is how many records a streamed chunk decodes at a time:
// their entries (72 bytes each) stay in cache until Next reads them.
const streamBatch = 512

// loadedChunk holds one chunk's buffers while its records are iterated.
type loadedChunk struct {
	buf      []byte // block header + meta section
	cm       chunkMeta
	metaRaw  []byte
	metaDec  []byte
	data     [][]byte // per group raw bytes, nil if not loaded
	dataBufs [][]byte
	readBuf  []byte
	dec      recordDecoder
	metaAt   int64 // file offset of the stored record metadata, for errors
}

// Records returns an iterator over the records selected by f. Chunks
// before f.Start are found by binary search over the index.
func (r *Reader) Records(f Filter) *Iterator {
	it := &Iterator{r: r, f: f, wall: f.Wall.Bounded()}
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
		if (f.Wall.HasStart && ci.MaxWallNs < f.Wall.Start) || (f.Wall.HasEnd && ci.MinWallNs >= f.Wall.End) {
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
			ch := e.channel
			if it.want != nil && !it.want[ch] {
				continue
			}
			if f.Start != 0 && e.mono < f.Start {
				continue
			}
			if f.End != 0 && e.mono >= f.End {
				continue
			}
			if it.wall && !f.Wall.Contains(e.wall) {
				continue
			}
			it.fill(e)
			return true
		}
		if it.stream != nil {
			it.nextBatch()
			continue
		}
		if it.err != nil || it.pos >= len(it.plan) {
			return false
		}
		it.loadCluster()
	}
}

func (it *Iterator) fill(e *metaEntry) {
	r := &it.rec
	lc := it.slots[e.slot]
	r.Channel, r.RecvWallNs, r.RecvMonoNs, r.CaptureNs, r.Seq = e.channel, e.wall, e.mono, e.capture, e.seq
	r.HasStamp, r.HasPubSN, r.PublisherSN = e.flags&rfStamp != 0, e.flags&rfPubSN != 0, e.sn
	r.HeaderLen, r.PayloadLen = int(e.hdrLen), int(e.payLen)
	r.PublisherID, r.Header, r.Payload = nil, nil, nil
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

// nextBatch decodes the streamed chunk's next records into entries.
func (it *Iterator) nextBatch() {
	lc := it.stream
	var err error
	it.entries, err = lc.dec.decode(it.entries[:0], streamBatch)
	it.ei = 0
	if lc.dec.done() {
		it.stream = nil
	}
	if err != nil {
		// The chunk passed its CRC, so this is a writer's bug or a crafted
		// file. Strict mode only streams: the records of earlier batches
		// have been returned, this batch is dropped, and the iteration
		// stops here.
		it.entries = it.entries[:0]
		it.err = asCorruption(lc.decodeError(it.r.opts.Name, err), it.r.opts.Name)
	}
}

// loadCluster loads the next chunk, together with the following chunks
// whose time ranges overlap it, and orders their records by time. In
// strict mode a chunk in order on its own is streamed instead
// (nextBatch): the common case of a recorder's log. Tolerant mode
// decodes every chunk whole first, so a damaged one is skipped whole.
func (it *Iterator) loadCluster() {
	r := it.r
	it.entries = it.entries[:0]
	it.ei = 0
	it.nslots = 0
	first := it.pos
	if ci := &r.chunks[it.plan[first]]; !r.opts.Tolerant && ci.Sorted &&
		(first+1 == len(it.plan) || r.chunks[it.plan[first+1]].MinMonoNs >= ci.MaxMonoNs) {
		it.pos++
		if len(it.slots) == 0 {
			it.slots = append(it.slots, &loadedChunk{})
		}
		lc := it.slots[0]
		if err := r.openChunk(lc, ci, it.want, it.f.MetaOnly, 0); err != nil {
			it.err = asCorruption(err, r.opts.Name)
			return
		}
		it.stream = lc
		return
	}
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
	if err := r.openChunk(lc, ci, want, metaOnly, slot); err != nil {
		return out, err
	}
	start := len(out)
	out, err := lc.dec.decode(out, len(lc.metaRaw))
	if err != nil {
		return out[:start], lc.decodeError(r.opts.Name, err)
	}
	return out, nil
}

// decodeError places a failure of the chunk's record metadata at its offset.
func (lc *loadedChunk) decodeError(name string, err error) error {
	return corrupt(name, lc.metaAt, "chunk record metadata", "", err)
}

// openChunk reads and checks one chunk's meta section and decompresses
// its record metadata, ready for lc.dec; unless metaOnly it also reads
// the payload blocks of the wanted channels (all if want is nil).
func (r *Reader) openChunk(lc *loadedChunk, ci *ChunkInfo, want []bool, metaOnly bool, slot uint16) error {
	o := &r.opts
	name := o.Name
	n := blockHeaderSize + int(ci.MetaLen)
	if int64(ci.MetaLen) > o.MaxChunkSize || int64(ci.DataLen) > o.MaxChunkSize {
		return corrupt(name, ci.Offset, "chunk", fmt.Sprintf("sections <= %d bytes", o.MaxChunkSize), ErrTooLarge)
	}
	if ci.Offset < 0 || ci.Offset+ci.Size() > r.size {
		return corrupt(name, ci.Offset, "chunk", "a chunk inside the file", ErrTornTail)
	}
	if cap(lc.buf) < n {
		lc.buf = make([]byte, n)
	}
	lc.buf = lc.buf[:n]
	if _, err := r.ReadAt(lc.buf, ci.Offset); err != nil {
		return fmt.Errorf("%s: read chunk at %d: %w", name, ci.Offset, err)
	}
	h, err := parseBlockHeader(lc.buf)
	if err != nil {
		return corrupt(name, ci.Offset, "chunk block header", "a valid block header", err)
	}
	if h.kind != kindChunk || h.metaLen != ci.MetaLen || h.dataLen != ci.DataLen {
		return corrupt(name, ci.Offset, "chunk block header", fmt.Sprintf("chunk with sections %d+%d (index)", ci.MetaLen, ci.DataLen), ErrMalformed)
	}
	meta := lc.buf[blockHeaderSize:]
	if crc(meta) != h.metaCRC {
		return corrupt(name, ci.Offset+blockHeaderSize, "chunk meta section", fmt.Sprintf("crc32c %#08x", h.metaCRC), ErrBadCRC)
	}
	if err := parseChunkMeta(meta, h.dataLen, o, &lc.cm); err != nil {
		return corrupt(name, ci.Offset+blockHeaderSize, "chunk meta section", "", err)
	}
	lc.metaAt = ci.Offset + blockHeaderSize + int64(len(meta)-len(lc.cm.metaStored))
	raw, err := r.decompress(lc.cm.metaKind, lc.cm.metaStored, lc.cm.metaRawLen, lc.metaDec)
	if lc.cm.metaKind != CompressionNone && raw != nil {
		lc.metaDec = raw
	}
	if err != nil {
		return lc.decodeError(name, err)
	}
	lc.metaRaw = raw
	lc.dec.reset(raw, &lc.cm, o.MaxRecordSize, slot)
	ng := len(lc.cm.groups)
	if cap(lc.data) < ng {
		lc.data = make([][]byte, ng)
	}
	lc.data = lc.data[:ng]
	clear(lc.data)
	if metaOnly {
		return nil
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
			return fmt.Errorf("%s: read %s at %d: %w", name, what, at, err)
		}
		if crc(stored) != g.crc {
			return corrupt(name, at, what, fmt.Sprintf("crc32c %#08x", g.crc), ErrBadCRC)
		}
		d, err := r.decompress(g.kind, stored, g.rawLen, lc.dataBufs[i])
		if err != nil {
			return corrupt(name, at, what, "", err)
		}
		if g.kind != CompressionNone {
			lc.dataBufs[i] = d
		}
		lc.data[i] = d
		if d == nil {
			lc.data[i] = []byte{}
		}
	}
	return nil
}
