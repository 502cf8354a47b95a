package logfmt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
)

// scanResult is what a linear scan of the block sequence finds.
type scanResult struct {
	header    Header
	headerOff int64 // offset of the header block, -1 if missing
	channels  []Channel
	chunks    []ChunkInfo
	groups    [][]groupEntry // each chunk's group directory, for statistics and payload checks
	drops     map[uint16]uint64
	footer    *footer // footer block found in the sequence, if valid
	footerOff int64
	end       int64 // offset after the last good block
	tornTail  *CorruptionError
	// problems is damage in the middle of the file that may have cost
	// records (a tolerant scan goes on after it).
	problems []*CorruptionError
	// warnings is damage that cost no record: a damaged prelude, header
	// block, footer or trailer. Even a strict scan reads past it.
	warnings      []*CorruptionError
	headerDamaged bool   // the header block is among the warnings
	blockSpans    []span // every good block, in file order
}

type span struct {
	kind byte
	off  int64
	size int64
}

// readPrelude checks the 16-byte prelude.
func readPrelude(ra io.ReaderAt, size int64, name string) (major, minor uint16, err error) {
	var p [preludeSize]byte
	if size < preludeSize {
		if _, err := ra.ReadAt(p[:size], 0); err != nil && err != io.EOF {
			return 0, 0, fmt.Errorf("%s: read prelude: %w", name, err)
		}
		if bytes.HasPrefix(fileMagic[:], p[:min(size, 8)]) {
			return 0, 0, corrupt(name, 0, "file prelude", fmt.Sprintf("%d bytes", preludeSize), ErrTornTail)
		}
		return 0, 0, corrupt(name, 0, "file magic", fmt.Sprintf("% x", fileMagic), ErrBadMagic)
	}
	if _, err := ra.ReadAt(p[:], 0); err != nil {
		return 0, 0, fmt.Errorf("%s: read prelude: %w", name, err)
	}
	if [8]byte(p[:8]) != fileMagic {
		return 0, 0, corrupt(name, 0, "file magic", fmt.Sprintf("% x", fileMagic), ErrBadMagic)
	}
	if crc(p[:12]) != le.Uint32(p[12:]) {
		return 0, 0, corrupt(name, 12, "file prelude", fmt.Sprintf("crc32c %#08x", le.Uint32(p[12:])), ErrBadCRC)
	}
	major, minor = le.Uint16(p[8:]), le.Uint16(p[10:])
	if major != VersionMajor {
		return major, minor, corrupt(name, 8, "format version", fmt.Sprintf("major version %d", VersionMajor),
			fmt.Errorf("%w: %d.%d", ErrUnsupportedVersion, major, minor))
	}
	return major, minor, nil
}

// checkStart checks the prelude. A damaged prelude (magic or CRC) in
// front of a valid block is only a warning: the log behind it is intact
// and read as the reader's version (1.1: it reads every 1.x it knows). A file whose first page holds only zeros is a
// torn tail at offset 0: it was created, and a power loss kept its data
// from reaching the disk. Anything else that fails is an error: not a
// vrlog log, a newer major version, or a file cut inside its prelude.
func checkStart(l *chunkLoader) (major, minor uint16, warning *CorruptionError, err error) {
	major, minor, err = readPrelude(l, l.size, l.opts.Name)
	if err == nil || !(errors.Is(err, ErrBadMagic) || errors.Is(err, ErrBadCRC)) || l.size < preludeSize {
		return major, minor, nil, err
	}
	if l.validBlockAt(preludeSize) {
		return VersionMajor, VersionMinor, asCorruption(err, l.opts.Name), nil
	}
	page := make([]byte, min(l.size, 4096))
	if _, rerr := l.ReadAt(page, 0); rerr == nil && !slices.ContainsFunc(page, func(b byte) bool { return b != 0 }) {
		return 0, 0, nil, corrupt(l.opts.Name, 0, "file prelude", fmt.Sprintf("the vrlog magic, not %d zero bytes (the data never reached the disk)", len(page)), ErrTornTail)
	}
	return 0, 0, nil, err
}

// blockLimit is the largest meta section of a block of kind k.
func blockLimit(k byte, o *ReaderOptions) int64 {
	switch k {
	case kindChunk:
		return o.MaxChunkSize
	case kindFooter:
		return o.MaxIndexSize
	}
	return min(o.MaxIndexSize, 16<<20)
}

// readBlockAt reads and checks the block at off, which must end by end:
// header CRC, limits, and the meta section CRC. It returns the header
// and the meta section (in buf, reused). On damage the header is
// returned too if it was valid.
func readBlockAt(l *chunkLoader, end, off int64, buf []byte) (blockHeader, []byte, *CorruptionError) {
	o := &l.opts
	name := o.Name
	if off < 0 || off > end {
		return blockHeader{}, nil, corrupt(name, off, "block", fmt.Sprintf("an offset inside the file (%d bytes)", end), ErrMalformed)
	}
	var hb [blockHeaderSize]byte
	n := min(int64(blockHeaderSize), end-off)
	if _, err := l.ReadAt(hb[:n], off); err != nil && err != io.EOF {
		return blockHeader{}, nil, corrupt(name, off, "block header", "", err)
	}
	if n < blockHeaderSize {
		return blockHeader{}, nil, corrupt(name, off, "block header", fmt.Sprintf("%d bytes, file ends after %d", blockHeaderSize, n), ErrTornTail)
	}
	h, err := parseBlockHeader(hb[:])
	if err != nil {
		exp := "block header crc32c"
		if errors.Is(err, ErrBadMagic) {
			exp = fmt.Sprintf("sync marker %q", blockSync[:])
		}
		return blockHeader{}, nil, corrupt(name, off, "block header", exp, err)
	}
	if lim := blockLimit(h.kind, o); int64(h.metaLen) > lim {
		return h, nil, corrupt(name, off, kindName(h.kind), fmt.Sprintf("meta section <= %d bytes, header says %d", lim, h.metaLen), ErrTooLarge)
	}
	if h.kind == kindChunk && int64(h.dataLen) > o.MaxChunkSize {
		return h, nil, corrupt(name, off, "chunk", fmt.Sprintf("data section <= %d bytes, header says %d", o.MaxChunkSize, h.dataLen), ErrTooLarge)
	}
	if h.kind != kindChunk && h.dataLen != 0 {
		return h, nil, corrupt(name, off, kindName(h.kind), "no data section", ErrMalformed)
	}
	if off+h.size() > end {
		return h, nil, corrupt(name, off, kindName(h.kind), fmt.Sprintf("%d bytes, file ends after %d", h.size(), end-off), ErrTornTail)
	}
	if cap(buf) < int(h.metaLen) {
		buf = make([]byte, h.metaLen)
	}
	buf = buf[:h.metaLen]
	if _, err := l.ReadAt(buf, off+blockHeaderSize); err != nil {
		return h, nil, corrupt(name, off, kindName(h.kind), "", err)
	}
	if crc(buf) != h.metaCRC {
		return h, nil, corrupt(name, off+blockHeaderSize, kindName(h.kind)+" meta section", fmt.Sprintf("crc32c %#08x", h.metaCRC), ErrBadCRC)
	}
	return h, buf, nil
}

// validBlockAt reports whether a plausible block starts at off: sync
// marker, header CRC, fits in the file.
func (l *chunkLoader) validBlockAt(off int64) bool {
	var b [blockHeaderSize]byte
	if off < 0 || l.size-off < blockHeaderSize {
		return false
	}
	if _, err := l.ReadAt(b[:], off); err != nil {
		return false
	}
	return plausibleBlock(b[:], off, l.size)
}

func plausibleBlock(b []byte, off, size int64) bool {
	h, err := parseBlockHeader(b)
	return err == nil && off+h.size() <= size
}

// trailerAt returns the footer offset of a valid trailer at off.
func (l *chunkLoader) trailerAt(off int64) (int64, bool) {
	var t [trailerSize]byte
	if off < 0 || l.size-off != trailerSize {
		return 0, false
	}
	if _, err := l.ReadAt(t[:], off); err != nil {
		return 0, false
	}
	return parseTrailer(t[:])
}

// resync searches for the next valid block header after off, or a valid
// trailer at the end of the file. It returns -1 when there is none.
func resync(l *chunkLoader, off int64) int64 {
	const window = 1 << 20
	size := l.size
	buf := make([]byte, min(window+blockHeaderSize, max(size-off, 0)))
	for pos := off + 1; pos+blockHeaderSize <= size; {
		n := min(int64(len(buf)), size-pos)
		if _, err := l.ReadAt(buf[:n], pos); err != nil && err != io.EOF {
			return -1
		}
		b := buf[:n]
		for i := 0; ; {
			k := bytes.Index(b[i:], blockSync[:])
			if k < 0 || int64(i+k)+blockHeaderSize > n {
				break
			}
			i += k
			if plausibleBlock(b[i:i+blockHeaderSize], pos+int64(i), size) {
				return pos + int64(i)
			}
			i++
		}
		if pos+n >= size {
			break
		}
		pos += n - blockHeaderSize + 1
	}
	if size-trailerSize > off {
		if _, ok := l.trailerAt(size - trailerSize); ok {
			return size - trailerSize
		}
	}
	return -1
}

// scan walks the block sequence from start (the end of the prelude) to
// the end of the file. In strict mode (tolerant=false) the first damage
// that may have cost records and has valid data after it is returned as
// an error; a torn tail never is, nor damage that cost no record
// (res.warnings).
func scan(l *chunkLoader, start int64, tolerant bool) (*scanResult, error) {
	o := &l.opts
	size := l.size
	res := &scanResult{headerOff: -1, footerOff: -1, drops: map[uint16]uint64{}, end: start}
	seen := map[uint16]bool{}
	var buf []byte
	var cm chunkMeta
	off := start
	for off < size {
		if _, ok := l.trailerAt(off); ok {
			break
		}
		h, meta, cerr := readBlockAt(l, size, off, buf)
		if cerr == nil {
			buf = meta
			cerr = res.take(h, meta, off, o, off == start, seen, &cm)
		}
		if cerr != nil {
			if res.footer != nil && off == res.end && size-off == trailerSize {
				// A valid footer block, then 24 bytes that are no trailer.
				res.warnings = append(res.warnings, corrupt(o.Name, off, "trailer", fmt.Sprintf("the end magic %q and a valid crc32c", trailerMagic[:]), ErrBadCRC))
				break
			}
			next := resync(l, off)
			if next < 0 {
				res.tornTail = asTorn(cerr)
				break
			}
			if res.harmless(l, off, next, start) {
				res.warnings = append(res.warnings, cerr)
				res.headerDamaged = res.headerDamaged || off == start
			} else if tolerant {
				res.problems = append(res.problems, cerr)
			} else {
				return res, cerr
			}
			off = next
			continue
		}
		res.blockSpans = append(res.blockSpans, span{kind: h.kind, off: off, size: h.size()})
		off += h.size()
		res.end = off
	}
	res.tearTail(l)
	return res, nil
}

// asTorn marks damage that nothing valid follows as a torn tail.
func asTorn(ce *CorruptionError) *CorruptionError {
	if !errors.Is(ce.Err, ErrTornTail) {
		ce.Err = fmt.Errorf("%w: %w", ErrTornTail, ce.Err)
	}
	return ce
}

// harmless reports whether damage from off up to the next valid block
// at next cost no record: it is exactly the first block, the header, or
// exactly the footer the trailer points to. The damaged first block's
// extent checks out when its lengths lead to next although its CRCs
// fail, or, when a length itself was hit, when no other block starts in
// between (no sync marker: one block, damaged in place).
func (res *scanResult) harmless(l *chunkLoader, off, next, start int64) bool {
	if off == start && res.headerOff < 0 && len(res.blockSpans) == 0 && next-off <= blockHeaderSize+blockLimit(kindHeader, &l.opts) {
		var hb [blockHeaderSize]byte
		if _, err := l.ReadAt(hb[:], off); err == nil &&
			((le.Uint32(hb[12:]) == 0 && off+blockHeaderSize+int64(le.Uint32(hb[8:])) == next) || !l.syncIn(off+1, next)) {
			return true
		}
	}
	foff, ok := l.trailerAt(next)
	return ok && foff == off && off == res.end
}

// syncIn reports whether a block sync marker starts in [from, to).
func (l *chunkLoader) syncIn(from, to int64) bool {
	b := make([]byte, to-from+int64(len(blockSync))-1)
	n, _ := l.ReadAt(b, from)
	return bytes.Contains(b[:n], blockSync[:]) && bytes.Index(b[:n], blockSync[:]) < int(to-from)
}

// tearTail moves chunks at the end of the scan whose payload blocks fail
// their CRC into the torn tail. Their block header and meta section
// reached the disk and their data did not: power loss leaves zeros where
// pages were never written back, and a write cut short leaves the rest
// of the block stale. Nothing sound follows them, so they are the tail of
// an interrupted recording, not damage in the middle.
func (res *scanResult) tearTail(l *chunkLoader) {
	var buf []byte
	for n := len(res.blockSpans); n > 0 && res.blockSpans[n-1].kind == kindChunk; n-- {
		k := len(res.chunks) - 1
		ci := &res.chunks[k]
		cerr := l.checkPayloads(ci, res.groups[k], &buf)
		if cerr == nil {
			return
		}
		res.tornTail = asTorn(corrupt(l.opts.Name, ci.Offset, fmt.Sprintf("chunk: %s at offset %d", cerr.What, cerr.Offset), cerr.Expected, cerr.Err))
		res.chunks, res.groups = res.chunks[:k], res.groups[:k]
		res.blockSpans = res.blockSpans[:n-1]
		res.end = ci.Offset
	}
}

// take interprets one CRC-valid block found by the scan.
func (res *scanResult) take(h blockHeader, meta []byte, off int64, o *ReaderOptions, first bool, seen map[uint16]bool, cm *chunkMeta) *CorruptionError {
	name := o.Name
	switch h.kind {
	case kindHeader:
		hd, ok := parseHeaderBody(meta)
		if !ok || !first {
			return corrupt(name, off, "header block", "the first block, well formed", ErrMalformed)
		}
		hd.Metadata = cloneMap(hd.Metadata)
		res.header, res.headerOff = hd, off
	case kindChannel:
		c, ok := parseChannelBody(&dec{b: meta})
		if !ok || c.ID == 0 {
			return corrupt(name, off, "channel block", "a channel definition", ErrMalformed)
		}
		if !seen[c.ID] {
			if len(res.channels) >= o.MaxChannels {
				return corrupt(name, off, "channel block", fmt.Sprintf("at most %d channels", o.MaxChannels), ErrTooLarge)
			}
			seen[c.ID] = true
			res.channels = append(res.channels, c)
		}
	case kindChunk:
		if err := parseChunkMeta(meta, h.dataLen, o, cm); err != nil {
			return corrupt(name, off, "chunk meta section", "", err)
		}
		res.chunks = append(res.chunks, chunkInfoOf(off, h, cm))
		res.groups = append(res.groups, append([]groupEntry(nil), cm.groups...))
	case kindDrops:
		d, ok := parseDropsBody(meta)
		if !ok {
			return corrupt(name, off, "drops block", "", ErrMalformed)
		}
		res.drops = d
	case kindFooter:
		f, ok := parseFooterBody(meta, o.MaxChannels)
		if !ok {
			return corrupt(name, off, "footer block", "", ErrMalformed)
		}
		res.footer, res.footerOff = f, off
	}
	// Unknown kinds are skipped: later minor versions may add blocks.
	return nil
}

func chunkInfoOf(off int64, h blockHeader, cm *chunkMeta) ChunkInfo {
	ci := ChunkInfo{Offset: off, MetaLen: h.metaLen, DataLen: h.dataLen, Records: cm.records, Sorted: cm.sorted,
		MinMonoNs: cm.minMono, MaxMonoNs: cm.maxMono, MinWallNs: cm.minWall, MaxWallNs: cm.maxWall}
	ci.Channels = make([]ChunkChannel, len(cm.groups))
	for i, g := range cm.groups {
		ci.Channels[i] = ChunkChannel{Channel: g.channel, Records: g.records, RawBytes: g.rawLen, StoredBytes: g.storedLen}
	}
	return ci
}

func cloneMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// index returns the channel table and statistics the scanned blocks
// imply, as a footer would hold them: the channels defined, sorted by
// id, with a placeholder for every channel a chunk uses but no channel
// block defines (its definition was lost); per-channel statistics folded
// from the chunks' group directories (as the writer does), with the
// latest drop counts. The Reader without a footer, Verify checking one
// and Recover writing one all build it this way.
func (res *scanResult) index() ([]Channel, []ChannelStats) {
	cs := append([]Channel(nil), res.channels...)
	have := map[uint16]bool{}
	for _, c := range cs {
		have[c.ID] = true
	}
	for _, ci := range res.chunks {
		for _, cc := range ci.Channels {
			if !have[cc.Channel] {
				have[cc.Channel] = true
				cs = append(cs, Channel{ID: cc.Channel, Name: fmt.Sprintf("lost-channel-%d", cc.Channel),
					Meta: map[string]string{"vrlog.placeholder": "definition lost"}})
			}
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
	byID := map[uint16]*ChannelStats{}
	for _, groups := range res.groups {
		for i := range groups {
			foldStats(byID, &groups[i])
		}
	}
	stats := make([]ChannelStats, len(cs))
	for i, c := range cs {
		stats[i] = ChannelStats{Channel: c.ID}
		if s := byID[c.ID]; s != nil {
			stats[i] = *s
		}
		stats[i].Drops = res.drops[c.ID]
	}
	return cs, stats
}

// foldStats adds one payload block's directory entry to its channel's
// statistics.
func foldStats(byID map[uint16]*ChannelStats, g *groupEntry) {
	s := byID[g.channel]
	if s == nil {
		s = &ChannelStats{Channel: g.channel}
		byID[g.channel] = s
	}
	if s.Records == 0 && g.records > 0 {
		s.FirstMonoNs, s.FirstWallNs = g.first[0], g.first[1]
	}
	if g.records > 0 {
		s.LastMonoNs, s.LastWallNs = g.last[0], g.last[1]
	}
	if g.hasCap {
		if !s.HasCapture {
			s.HasCapture = true
			s.FirstCaptureNs = g.first[2]
		}
		s.LastCaptureNs = g.last[2]
	}
	s.Records += uint64(g.records)
	s.RawBytes += uint64(g.rawLen)
	s.StoredBytes += uint64(g.storedLen)
}

// lostHeader stands in for a header block that was damaged: no metadata,
// and the earliest receive time of the chunks as the creation time.
func lostHeader(chunks []ChunkInfo) Header {
	var h Header
	for i, c := range chunks {
		if i == 0 || c.MinWallNs < h.CreatedWallNs {
			h.CreatedWallNs = c.MinWallNs
		}
	}
	return h
}
