package logfmt

import "sort"

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
	// Workers > 0 loads (reads, checks, decompresses) up to Workers
	// chunks at a time on other goroutines, ahead of the
	// iteration: the same records and errors in the same order, faster
	// on a spare core. It applies to logs whose chunks are in order (a
	// recorder's); others iterate without. Close the iterator when
	// stopping before Next returns false. Loading is most of a payload
	// read's work (zstd: 70-80 % of it for 200-byte states), so a
	// payload reader with two cores gives Workers ReadAhead() (2 there):
	// both load while the iteration decodes the record metadata beside
	// them (docs/benchmarks-logfmt.md, "Reading payloads"). Memory is
	// that of the chunks loaded ahead, whatever the log's length: about
	// 8 MiB of them, at least Workers+1.
	Workers int
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
	ahead   *prefetcher  // workers loading chunks ahead (Filter.Workers), or nil
	rec     Record
	err     error
}

// streamBatch is how many records a streamed chunk decodes at a time:
// their entries (72 bytes each) stay in cache until Next reads them.
const streamBatch = 512

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
	if f.Workers > 0 && len(it.plan) > 1 && it.streamsAlone() {
		it.startWorkers(f.Workers)
	}
	return it
}

// Next advances to the next record; it returns false at the end or on an
// error (see Err).
func (it *Iterator) Next() bool {
	for {
		for it.ei < len(it.entries) {
			e := &it.entries[it.ei]
			it.ei++
			if it.keeps(e) {
				it.fill(e)
				return true
			}
		}
		if it.stream != nil {
			it.nextBatch()
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

// keeps says whether the filter keeps the record of e.
func (it *Iterator) keeps(e *metaEntry) bool {
	f := &it.f
	return (it.want == nil || it.want[e.channel]) && (f.Start == 0 || e.mono >= f.Start) &&
		(f.End == 0 || e.mono < f.End) && (!it.wall || f.Wall.Contains(e.wall))
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
	if cap(it.entries) < streamBatch {
		it.entries = make([]metaEntry, 0, streamBatch)
	}
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
// whose time ranges overlap it, and orders their records by time. A
// chunk in order on its own is streamed instead (nextBatch): the common
// case of a recorder's log. Tolerant mode checks every record of a chunk
// before it returns the first, so a damaged one is skipped whole.
func (it *Iterator) loadCluster() {
	r := it.r
	it.entries = it.entries[:0]
	it.ei = 0
	it.nslots = 0
	first := it.pos
	if ci := &r.chunks[it.plan[first]]; ci.Sorted &&
		(first+1 == len(it.plan) || r.chunks[it.plan[first+1]].MinMonoNs >= ci.MaxMonoNs) {
		it.pos++
		if len(it.slots) == 0 {
			it.slots = append(it.slots, &loadedChunk{})
		}
		lc := it.slots[0]
		err := r.openChunk(lc, ci, it.want, it.f.MetaOnly, 0)
		if err == nil && r.opts.Tolerant {
			// A damaged chunk is skipped whole: check every record
			// before the first one is returned.
			_, err = lc.checkRecords(r.opts.Name, &it.entries)
		}
		if err != nil {
			ce := asCorruption(err, r.opts.Name)
			if !r.opts.Tolerant {
				it.err = ce
				return
			}
			r.skip(ce)
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
