// The chunk decoder: a chunk's meta section (prefix and group directory)
// and its record metadata, decoded and checked against each other
// (docs/log-format.md §6). Reading the bytes is chunkloader.go's job.

package logfmt

import (
	"encoding/binary"
	"fmt"
)

// groupEntry is one entry of a chunk's group directory.
type groupEntry struct {
	channel   uint16
	kind      CompressionKind
	level     uint8
	hasCap    bool
	records   uint32
	rawLen    uint32
	storedLen uint32
	crc       uint32
	dataOff   uint32 // offset of the stored block inside the data section
	first     [3]int64
	last      [3]int64
}

// chunkMeta is a parsed chunk meta section (prefix + directory); the
// stored record metadata is metaStored.
type chunkMeta struct {
	records    uint32
	metaKind   CompressionKind
	sorted     bool
	minMono    int64
	maxMono    int64
	minWall    int64
	maxWall    int64
	metaRawLen uint32
	groups     []groupEntry
	metaStored []byte
}

// parseChunkMeta parses a CRC-checked meta section. dataLen is the
// block's data length, which the group sizes must add up to.
func parseChunkMeta(meta []byte, dataLen uint32, lim *ReaderOptions, cm *chunkMeta) error {
	if len(meta) < chunkPrefixSize {
		return fmt.Errorf("%w: chunk meta section of %d bytes", ErrMalformed, len(meta))
	}
	d := dec{b: meta}
	cm.records = d.u32()
	ng := int(d.u16())
	cm.metaKind = CompressionKind(d.u8())
	sorted := d.u8()
	cm.sorted = sorted == 1
	cm.minMono, cm.maxMono, cm.minWall, cm.maxWall = d.i64(), d.i64(), d.i64(), d.i64()
	cm.metaRawLen = d.u32()
	metaStoredLen := d.u32()
	if sorted > 1 || cm.metaKind > maxCompressionKind {
		return fmt.Errorf("%w: chunk flags", ErrMalformed)
	}
	if ng > lim.MaxChannels || ng > len(d.b)/groupEntrySize {
		return fmt.Errorf("%w: %d payload blocks", ErrMalformed, ng)
	}
	if int64(cm.metaRawLen) > lim.MaxChunkSize {
		return fmt.Errorf("%w: record metadata of %d bytes", ErrTooLarge, cm.metaRawLen)
	}
	if cm.metaKind == CompressionNone && cm.metaRawLen != metaStoredLen {
		return fmt.Errorf("%w: stored record metadata length", ErrMalformed)
	}
	if cap(cm.groups) < ng {
		cm.groups = make([]groupEntry, ng)
	}
	cm.groups = cm.groups[:ng]
	var off uint64
	for i := range cm.groups {
		g := &cm.groups[i]
		g.channel = d.u16()
		g.kind = CompressionKind(d.u8())
		g.level = d.u8()
		fl := d.u32()
		g.hasCap = fl&1 != 0
		g.records = d.u32()
		g.rawLen = d.u32()
		g.storedLen = d.u32()
		g.crc = d.u32()
		for k := 0; k < 3; k++ {
			g.first[k] = d.i64()
			g.last[k] = d.i64()
		}
		g.dataOff = uint32(off)
		off += uint64(g.storedLen)
		if g.kind > maxCompressionKind || fl > 1 || (g.kind == CompressionNone && g.rawLen != g.storedLen) {
			return fmt.Errorf("%w: payload block %d", ErrMalformed, i)
		}
		if int64(g.rawLen) > lim.MaxChunkSize {
			return fmt.Errorf("%w: payload block of %d bytes", ErrTooLarge, g.rawLen)
		}
		for j := 0; j < i; j++ {
			if cm.groups[j].channel == g.channel {
				return fmt.Errorf("%w: channel %d has two payload blocks", ErrMalformed, g.channel)
			}
		}
	}
	if off != uint64(dataLen) {
		return fmt.Errorf("%w: payload blocks add up to %d bytes, data section is %d", ErrMalformed, off, dataLen)
	}
	if d.bad || uint64(len(d.b)) != uint64(metaStoredLen) {
		return fmt.Errorf("%w: chunk meta section length", ErrMalformed)
	}
	cm.metaStored = d.b
	return nil
}

// metaEntry is one decoded record's metadata.
type metaEntry struct {
	mono, wall, capture int64
	seq, sn             uint64
	dataOff             uint32 // offset of header+payload in the group's raw block
	hdrLen, payLen      uint32
	pubOff, pubLen      uint32 // publisher id inside the raw metadata
	group               uint16
	channel             uint16
	flags               uint8
	slot                uint16 // index of the loaded chunk (iterator)
}

type groupState struct {
	prevSeq, prevSN uint64
	pubOff, pubLen  uint32
	havePub         bool
	cursor          uint64
	n               uint32
}

// uvarint and varint decode record metadata like binary.Uvarint and
// binary.Varint (k <= 0 on a truncated or overlong value), but cheaply
// enough to inline into recordDecoder.decode, the reader's hottest loop.
func uvarint(b []byte) (x uint64, k int) {
	for i, c := range b {
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				return 0, -1
			}
			return x | uint64(c)<<(7*i), i + 1
		}
		if i == binary.MaxVarintLen64-1 {
			return 0, -1
		}
		x |= uint64(c&0x7f) << (7 * i)
	}
	return 0, 0
}

func varint(b []byte) (int64, int) {
	ux, k := uvarint(b)
	return int64(ux>>1) ^ -int64(ux&1), k
}

// word8 and uvarintWord decode the usual varints without a loop over
// their bytes. word8 is the 8 bytes at p (none that end a varint when
// fewer remain); uvarintWord decodes a varint of 1 to 4 bytes (seq
// deltas, lengths, millisecond time deltas), k 0 for any other (then
// uvarintSlow decides). The lengths are branches that return, not
// computed: a record's fields are a chain, each starting where the one
// before ends, and a predicted branch lets the next field's load start
// before this one's value is known (computing the length branch-free, or
// a byte loop that mispredicts its exit, puts it on the chain).
func word8(raw []byte, p int) uint64 {
	if len(raw)-p >= 8 {
		return le.Uint64(raw[p:])
	}
	return ^uint64(0)
}

func uvarintWord(w uint64) (x uint64, k int) {
	if x = w & 0x7f; w&0x80 == 0 {
		return x, 1
	}
	if x |= w >> 1 & 0x3f80; w&0x8000 == 0 {
		return x, 2
	}
	if x |= w >> 2 & 0x1fc000; w&0x800000 == 0 {
		return x, 3
	}
	if x |= w >> 3 & 0xfe00000; w&0x80000000 == 0 {
		return x, 4
	}
	return 0, 0
}

// zigzag is a varint's signed value.
func zigzag(ux uint64) int64 { return int64(ux>>1) ^ -int64(ux&1) }

// uvarintSlow is uvarint, not inlined: uvarintWord's other cases (a
// varint of 5 bytes or more, truncated, overlong, or in the last 8 bytes).
//
//go:noinline
func uvarintSlow(b []byte) (uint64, int) { return uvarint(b) }

// recordDecoder decodes a chunk's raw record metadata and checks it
// against the directory: counts, byte sums, sortedness. It works in
// batches, so a reader streaming through a chunk keeps its decoded
// entries in cache instead of writing and re-reading the whole chunk's.
type recordDecoder struct {
	raw       []byte
	cm        *chunkMeta
	maxRecord int64
	gs        []groupState
	slot      uint16 // the iterator's index of the chunk, copied into entries
	p         int
	n         uint32
	prevMono  int64
	prevOff   int64
}

func (d *recordDecoder) reset(raw []byte, cm *chunkMeta, maxRecord int64, slot uint16) {
	ng := len(cm.groups)
	if cap(d.gs) < ng {
		d.gs = make([]groupState, ng)
	}
	gs := d.gs[:ng]
	clear(gs)
	*d = recordDecoder{raw: raw, cm: cm, maxRecord: maxRecord, gs: gs, slot: slot}
}

// rewind starts the decoder again at the chunk's first record.
func (d *recordDecoder) rewind() { d.reset(d.raw, d.cm, d.maxRecord, d.slot) }

// done reports whether every record has been decoded and checked.
func (d *recordDecoder) done() bool { return d.p > len(d.raw) }

// decode appends the entries of up to max more records to out. After the
// last record it checks the chunk's totals; an error stops the decoder.
func (d *recordDecoder) decode(out []metaEntry, max int) ([]metaEntry, error) {
	raw, cm, gs, maxRecord, slot := d.raw, d.cm, d.gs, d.maxRecord, d.slot
	ng := len(gs)
	// The running state lives in locals (registers) and is stored back
	// when a batch ends: a deferred closure or one building the errors
	// would keep it in memory, on the hot loop's dependency chain.
	prevMono, prevOff, n, p := d.prevMono, d.prevOff, d.n, d.p
	for end := len(out) + max; p < len(raw); {
		if len(out) == end {
			d.prevMono, d.prevOff, d.n, d.p = prevMono, prevOff, n, p
			return out, nil
		}
		if n >= cm.records {
			return out, d.stop(badRecord(n, "more records than the chunk prefix says"))
		}
		out = append(out, metaEntry{}) // filled in place: entries are the hot write
		e := &out[len(out)-1]
		gi, k := uvarintWord(word8(raw, p))
		if k == 0 {
			gi, k = uvarintSlow(raw[p:])
		}
		if k <= 0 || gi >= uint64(ng) {
			return out, d.stop(badRecord(n, "payload block index"))
		}
		p += k
		if p >= len(raw) {
			return out, d.stop(badRecord(n, "truncated"))
		}
		flags := raw[p]
		p++
		if flags&^rfKnown != 0 || flags&(rfPubID|rfPubSame) == rfPubID|rfPubSame {
			return out, d.stop(badRecord(n, "flags"))
		}
		g := &gs[gi]
		udm, k := uvarintWord(word8(raw, p))
		if k == 0 {
			udm, k = uvarintSlow(raw[p:])
		}
		dm := zigzag(udm)
		if k <= 0 {
			return out, d.stop(badRecord(n, "mono delta"))
		}
		p += k
		udo, k := uvarintWord(word8(raw, p))
		if k == 0 {
			udo, k = uvarintSlow(raw[p:])
		}
		do := zigzag(udo)
		if k <= 0 {
			return out, d.stop(badRecord(n, "wall delta"))
		}
		p += k
		e.mono = prevMono + dm
		off := prevOff + do
		e.wall = e.mono + off
		if cm.sorted && n > 0 && e.mono < prevMono {
			return out, d.stop(badRecord(n, "out of order in a chunk marked sorted"))
		}
		prevMono, prevOff = e.mono, off
		if flags&rfStamp != 0 {
			udc, k := uvarintWord(word8(raw, p))
			if k == 0 {
				udc, k = uvarintSlow(raw[p:])
			}
			dc := zigzag(udc)
			if k <= 0 {
				return out, d.stop(badRecord(n, "capture delta"))
			}
			p += k
			uds, k := uvarintWord(word8(raw, p))
			if k == 0 {
				uds, k = uvarintSlow(raw[p:])
			}
			ds := zigzag(uds)
			if k <= 0 {
				return out, d.stop(badRecord(n, "seq delta"))
			}
			p += k
			e.capture = e.wall + dc
			e.seq = g.prevSeq + 1 + uint64(ds)
			g.prevSeq = e.seq
		}
		switch {
		case flags&rfPubID != 0:
			l, k := uvarintWord(word8(raw, p))
			if k == 0 {
				l, k = uvarintSlow(raw[p:])
			}
			if k <= 0 || l == 0 || l > MaxPublisherID || l > uint64(len(raw)-p-k) {
				return out, d.stop(badRecord(n, "publisher id"))
			}
			p += k
			g.pubOff, g.pubLen, g.havePub = uint32(p), uint32(l), true
			p += int(l)
			e.pubOff, e.pubLen = g.pubOff, g.pubLen
		case flags&rfPubSame != 0:
			if !g.havePub {
				return out, d.stop(badRecord(n, "repeated publisher id without a first one"))
			}
			e.pubOff, e.pubLen = g.pubOff, g.pubLen
		}
		if flags&rfPubSN != 0 {
			uds, k := uvarintWord(word8(raw, p))
			if k == 0 {
				uds, k = uvarintSlow(raw[p:])
			}
			ds := zigzag(uds)
			if k <= 0 {
				return out, d.stop(badRecord(n, "publisher sn delta"))
			}
			p += k
			e.sn = g.prevSN + 1 + uint64(ds)
			g.prevSN = e.sn
		}
		var hl uint64
		if flags&rfHeader != 0 {
			hl, k = uvarintWord(word8(raw, p))
			if k == 0 {
				hl, k = uvarintSlow(raw[p:])
			}
			if k <= 0 || hl == 0 {
				return out, d.stop(badRecord(n, "header length"))
			}
			p += k
		}
		pl, k := uvarintWord(word8(raw, p))
		if k == 0 {
			pl, k = uvarintSlow(raw[p:])
		}
		if k <= 0 {
			return out, d.stop(badRecord(n, "payload length"))
		}
		p += k
		if hl > uint64(maxRecord) || pl > uint64(maxRecord) || hl+pl > uint64(maxRecord) {
			return out, d.stop(fmt.Errorf("%w: record %d of %d bytes", ErrTooLarge, n, hl+pl))
		}
		grp := &cm.groups[gi]
		if g.cursor+hl+pl > uint64(grp.rawLen) {
			return out, d.stop(badRecord(n, "payload runs past its block"))
		}
		e.dataOff = uint32(g.cursor)
		e.hdrLen, e.payLen = uint32(hl), uint32(pl)
		g.cursor += hl + pl
		e.group, e.channel, e.slot = uint16(gi), grp.channel, slot
		e.flags = flags
		g.n++
		n++
	}
	d.prevMono, d.prevOff, d.n, d.p = prevMono, prevOff, n, len(raw)+1 // done
	if n != cm.records {
		return out, fmt.Errorf("%w: %d records, chunk prefix says %d", ErrMalformed, n, cm.records)
	}
	for i := range gs {
		if gs[i].n != cm.groups[i].records || gs[i].cursor != uint64(cm.groups[i].rawLen) {
			return out, fmt.Errorf("%w: payload block %d: records or bytes disagree with the directory", ErrMalformed, i)
		}
	}
	return out, nil
}

// stop ends the decoder at err: done.
func (d *recordDecoder) stop(err error) error {
	d.p = len(d.raw) + 1
	return err
}

// badRecord is the error of malformed record n.
func badRecord(n uint32, what string) error {
	return fmt.Errorf("%w: record %d: %s", ErrMalformed, n, what)
}
