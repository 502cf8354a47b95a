package logfmt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
)

// scanResult is what a linear scan of the block sequence finds.
type scanResult struct {
	header     Header
	headerOff  int64 // offset of the header block, -1 if missing
	channels   []Channel
	chunks     []ChunkInfo
	drops      map[uint16]uint64
	footer     *footer // footer block found in the sequence, if valid
	footerOff  int64
	end        int64 // offset after the last good block
	tornTail   *CorruptionError
	problems   []*CorruptionError
	blockSpans []span // every good block, in file order (for Recover)
	stats      map[uint16]*ChannelStats
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

// readBlockAt reads and checks the block at off: header CRC, limits, that
// it fits in the file, and the meta section CRC. It returns the header
// and the meta section (in buf, reused).
func readBlockAt(ra io.ReaderAt, size, off int64, o *ReaderOptions, buf []byte, counter *int64) (blockHeader, []byte, *CorruptionError) {
	name := o.Name
	if off < 0 || off > size {
		return blockHeader{}, nil, corrupt(name, off, "block", fmt.Sprintf("an offset inside the file (%d bytes)", size), ErrMalformed)
	}
	var hb [blockHeaderSize]byte
	n := int64(blockHeaderSize)
	if size-off < n {
		n = size - off
	}
	if _, err := ra.ReadAt(hb[:n], off); err != nil && err != io.EOF {
		return blockHeader{}, nil, corrupt(name, off, "block header", "", err)
	}
	*counter += n
	if n < blockHeaderSize {
		return blockHeader{}, nil, corrupt(name, off, "block header", fmt.Sprintf("%d bytes, file ends after %d", blockHeaderSize, n), ErrTornTail)
	}
	h, err := parseBlockHeader(hb[:])
	if err != nil {
		exp := "block header crc32c"
		if errors.Is(err, ErrBadMagic) {
			exp = fmt.Sprintf("sync marker %q", blockSync[:])
		}
		return h, nil, corrupt(name, off, "block header", exp, err)
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
	if off+h.size() > size {
		return h, nil, corrupt(name, off, kindName(h.kind), fmt.Sprintf("%d bytes, file ends after %d", h.size(), size-off), ErrTornTail)
	}
	if cap(buf) < int(h.metaLen) {
		buf = make([]byte, h.metaLen)
	}
	buf = buf[:h.metaLen]
	if _, err := ra.ReadAt(buf, off+blockHeaderSize); err != nil {
		return h, nil, corrupt(name, off, kindName(h.kind), "", err)
	}
	*counter += int64(h.metaLen)
	if crc(buf) != h.metaCRC {
		return h, nil, corrupt(name, off+blockHeaderSize, kindName(h.kind)+" meta section", fmt.Sprintf("crc32c %#08x", h.metaCRC), ErrBadCRC)
	}
	return h, buf, nil
}

// validBlockAt reports whether a plausible block starts at off: sync
// marker, header CRC, fits in the file.
func validBlockAt(b []byte, off, size int64) bool {
	h, err := parseBlockHeader(b)
	return err == nil && off+h.size() <= size
}

// resync searches for the next valid block header after off, or a valid
// trailer at the end of the file. It returns -1 when there is none.
func resync(ra io.ReaderAt, size, off int64, counter *int64) int64 {
	const window = 1 << 20
	buf := make([]byte, window+blockHeaderSize)
	for pos := off + 1; pos+blockHeaderSize <= size; {
		n := min(int64(len(buf)), size-pos)
		if _, err := ra.ReadAt(buf[:n], pos); err != nil && err != io.EOF {
			return -1
		}
		*counter += n
		b := buf[:n]
		for i := 0; ; {
			k := bytes.Index(b[i:], blockSync[:])
			if k < 0 || int64(i+k)+blockHeaderSize > n {
				break
			}
			i += k
			if validBlockAt(b[i:i+blockHeaderSize], pos+int64(i), size) {
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
		var t [trailerSize]byte
		if _, err := ra.ReadAt(t[:], size-trailerSize); err == nil {
			if _, ok := parseTrailer(t[:]); ok {
				return size - trailerSize
			}
		}
	}
	return -1
}

// scan walks the block sequence from the prelude to the end of the file.
// In strict mode (tolerant=false) the first damage that has valid data
// after it is returned as an error; a torn tail never is.
func scan(ra io.ReaderAt, size int64, o *ReaderOptions, tolerant bool, counter *int64) (*scanResult, error) {
	res := &scanResult{headerOff: -1, footerOff: -1, drops: map[uint16]uint64{}}
	seen := map[uint16]bool{}
	var buf []byte
	var cm chunkMeta
	off := int64(preludeSize)
	first := true
	for off < size {
		if size-off == trailerSize {
			var t [trailerSize]byte
			if _, err := ra.ReadAt(t[:], off); err == nil {
				*counter += trailerSize
				if _, ok := parseTrailer(t[:]); ok {
					off = size
					break
				}
			}
		}
		h, meta, cerr := readBlockAt(ra, size, off, o, buf, counter)
		if cerr == nil {
			buf = meta
			cerr = res.take(h, meta, off, o, first, seen, &cm)
		}
		if cerr != nil {
			next := resync(ra, size, off, counter)
			if next < 0 {
				if !errors.Is(cerr.Err, ErrTornTail) {
					cerr.Err = fmt.Errorf("%w: %w", ErrTornTail, cerr.Err)
				}
				res.tornTail = cerr
				break
			}
			if !tolerant {
				return res, cerr
			}
			res.problems = append(res.problems, cerr)
			off = next
			first = false
			continue
		}
		res.blockSpans = append(res.blockSpans, span{kind: h.kind, off: off, size: h.size()})
		first = false
		off += h.size()
		res.end = off
	}
	if res.end == 0 {
		res.end = preludeSize
	}
	return res, nil
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
		res.addStats(cm)
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

// addStats folds a chunk's group directory into per-channel statistics,
// as the writer does for the footer.
func (res *scanResult) addStats(cm *chunkMeta) {
	if res.stats == nil {
		res.stats = map[uint16]*ChannelStats{}
	}
	for i := range cm.groups {
		g := &cm.groups[i]
		s := res.stats[g.channel]
		if s == nil {
			s = &ChannelStats{Channel: g.channel}
			res.stats[g.channel] = s
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
}

func sortChannels(cs []Channel) {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
}
