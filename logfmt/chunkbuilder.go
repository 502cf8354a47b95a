// The chunk builder: the open chunk on the writer side, records appended
// to per-channel payload blocks and delta-encoded record metadata
// (docs/log-format.md §6). The compression workers seal it.

package logfmt

import (
	"bytes"
	"encoding/binary"
)

// groupBuf is one channel's payload block inside the open chunk (writer
// side): raw header+payload bytes and the statistics that go into the
// chunk's group directory.
type groupBuf struct {
	ch      uint16
	comp    Compression
	raw     []byte
	stored  []byte // compression output, reused
	out     []byte // what is written: raw or stored (without refs)
	outLen  int    // stored length, refs included
	outKind CompressionKind
	crc     uint32
	n       uint32
	hasCap  bool
	first   [3]int64 // mono, wall, capture
	last    [3]int64
	prevSeq uint64
	prevSN  uint64
	prevPub []byte
	havePub bool
	// refs are payloads the writer owns (WriteOwned) and writes from the
	// caller's buffer instead of copying them into raw; only on channels
	// stored uncompressed. The block is raw with each ref spliced in at
	// its offset; refLen is their total length.
	refs   []payloadRef
	refLen int
}

// payloadRef is an owned payload spliced into a block at raw offset at.
type payloadRef struct {
	at      int
	p       []byte
	release func()
}

func (g *groupBuf) reset(ch uint16, comp Compression) {
	*g = groupBuf{ch: ch, comp: comp, raw: g.raw[:0], stored: g.stored[:0], prevPub: g.prevPub[:0], refs: g.refs[:0]}
}

// summary is what the channel's statistics need of the block.
func (g *groupBuf) summary() chunkGroup {
	return chunkGroup{channel: g.ch, records: g.n, raw: uint32(g.rawLen()), hasCapture: g.hasCap, first: g.first, last: g.last}
}

// rawLen is the block's uncompressed length.
func (g *groupBuf) rawLen() int { return len(g.raw) + g.refLen }

// pieces appends the block's stored bytes, in file order, to dst.
func (g *groupBuf) pieces(dst [][]byte) [][]byte {
	if len(g.refs) == 0 {
		return append(dst, g.out)
	}
	prev := 0
	for _, r := range g.refs {
		if r.at > prev {
			dst = append(dst, g.raw[prev:r.at])
		}
		dst = append(dst, r.p)
		prev = r.at
	}
	if prev < len(g.raw) {
		dst = append(dst, g.raw[prev:])
	}
	return dst
}

// releaseRefs hands owned payloads back once they are written (or the
// write failed).
func (g *groupBuf) releaseRefs() {
	for i, r := range g.refs {
		if r.release != nil {
			r.release()
		}
		g.refs[i] = payloadRef{}
	}
	g.refs = g.refs[:0]
	g.refLen = 0
}

// chunkBuilder is the open chunk (writer side).
type chunkBuilder struct {
	meta     []byte
	groups   []*groupBuf
	ng       int
	n        uint32
	minMono  int64
	maxMono  int64
	minWall  int64
	maxWall  int64
	sorted   bool
	prevMono int64
	prevOff  int64
	raw      int
}

func (b *chunkBuilder) reset() {
	b.meta = b.meta[:0]
	b.ng = 0
	b.n = 0
	b.sorted = true
	b.prevMono, b.prevOff = 0, 0
	b.raw = 0
}

func (b *chunkBuilder) addGroup(ch uint16, comp Compression) int {
	if b.ng == len(b.groups) {
		b.groups = append(b.groups, &groupBuf{})
	}
	b.groups[b.ng].reset(ch, comp)
	b.ng++
	return b.ng - 1
}

// recordMetaMax bounds one record's metadata without the publisher id's
// bytes: the group index (uvarint of a uint16), the flags, five 64-bit
// varints, the publisher id's length (at most MaxPublisherID), the header
// and payload lengths (at most 1 GiB each).
const recordMetaMax = 3 + 1 + 5*binary.MaxVarintLen64 + 1 + 2*5

// add appends one record to group gi. The caller has validated sizes.
// With a non-nil release the group keeps r.Payload itself instead of a
// copy and calls release once it is written. The metadata is encoded in
// room reserved once per record, not appended varint by varint: this is
// the writer's hottest loop after zstd.
func (b *chunkBuilder) add(gi int, r *Record, release func()) {
	g := b.groups[gi]
	m := b.meta
	start := len(m)
	m = grow(m, recordMetaMax+len(r.PublisherID))
	m = m[:cap(m)]
	i := putUvarint(m, start, uint64(gi))
	fpos := i
	i++
	i = putVarint(m, i, r.RecvMonoNs-b.prevMono)
	off := r.RecvWallNs - r.RecvMonoNs
	i = putVarint(m, i, off-b.prevOff)
	var flags byte
	if r.HasStamp {
		flags |= rfStamp
		i = putVarint(m, i, r.CaptureNs-r.RecvWallNs)
		i = putVarint(m, i, int64(r.Seq-(g.prevSeq+1)))
		g.prevSeq = r.Seq
		if !g.hasCap {
			g.hasCap = true
			g.first[2] = r.CaptureNs
		}
		g.last[2] = r.CaptureNs
	}
	if len(r.PublisherID) > 0 {
		if g.havePub && bytes.Equal(g.prevPub, r.PublisherID) {
			flags |= rfPubSame
		} else {
			flags |= rfPubID
			i = putUvarint(m, i, uint64(len(r.PublisherID)))
			i += copy(m[i:], r.PublisherID)
			g.prevPub = append(g.prevPub[:0], r.PublisherID...)
			g.havePub = true
		}
	}
	if r.HasPubSN {
		flags |= rfPubSN
		i = putVarint(m, i, int64(r.PublisherSN-(g.prevSN+1)))
		g.prevSN = r.PublisherSN
	}
	if len(r.Header) > 0 {
		flags |= rfHeader
		i = putUvarint(m, i, uint64(len(r.Header)))
	}
	i = putUvarint(m, i, uint64(len(r.Payload)))
	if release != nil {
		g.raw = append(grow(g.raw, len(r.Header)), r.Header...)
		g.refs = append(g.refs, payloadRef{at: len(g.raw), p: r.Payload, release: release})
		g.refLen += len(r.Payload)
	} else {
		g.raw = append(append(grow(g.raw, len(r.Header)+len(r.Payload)), r.Header...), r.Payload...)
	}
	m[fpos] = flags
	b.meta = m[:i]

	if b.n == 0 {
		b.minMono, b.maxMono, b.minWall, b.maxWall = r.RecvMonoNs, r.RecvMonoNs, r.RecvWallNs, r.RecvWallNs
	} else {
		if r.RecvMonoNs < b.prevMono {
			b.sorted = false
		}
		b.minMono = min(b.minMono, r.RecvMonoNs)
		b.maxMono = max(b.maxMono, r.RecvMonoNs)
		b.minWall = min(b.minWall, r.RecvWallNs)
		b.maxWall = max(b.maxWall, r.RecvWallNs)
	}
	if g.n == 0 {
		g.first[0], g.first[1] = r.RecvMonoNs, r.RecvWallNs
	}
	g.last[0], g.last[1] = r.RecvMonoNs, r.RecvWallNs
	g.n++
	b.n++
	b.prevMono, b.prevOff = r.RecvMonoNs, off
	b.raw += i - start + len(r.Header) + len(r.Payload)
}

// grow returns b with room for n more bytes, doubling its capacity:
// append grows a large slice by 1.25×, so filling a new chunk buffer's
// 4 MiB payload block took ~20 MiB of fresh, page-faulted memory and
// ~16 MiB of copies (doubling: 8 and 4), once per chunk buffer the
// writer recycles.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), max(2*cap(b), len(b)+n, 512))
	copy(nb, b)
	return nb
}

// putUvarint and putVarint encode like binary.PutUvarint and
// binary.PutVarint at m[i:], which has room, and return the end; small
// enough to inline into add.
func putUvarint(m []byte, i int, x uint64) int {
	for x >= 0x80 {
		m[i] = byte(x) | 0x80
		x >>= 7
		i++
	}
	m[i] = byte(x)
	return i + 1
}

func putVarint(m []byte, i int, x int64) int {
	return putUvarint(m, i, uint64(x<<1)^uint64(x>>63))
}

// appendChunkMetaPrefix appends the fixed chunk prefix and the group
// directory (everything of the meta section before the stored record
// metadata).
func (b *chunkBuilder) appendPrefix(dst []byte, metaKind CompressionKind, metaRaw, metaStored int) []byte {
	dst = le.AppendUint32(dst, b.n)
	dst = le.AppendUint16(dst, uint16(b.ng))
	dst = append(dst, byte(metaKind))
	dst = appendBool(dst, b.sorted)
	for _, v := range [...]int64{b.minMono, b.maxMono, b.minWall, b.maxWall} {
		dst = le.AppendUint64(dst, uint64(v))
	}
	dst = le.AppendUint32(dst, uint32(metaRaw))
	dst = le.AppendUint32(dst, uint32(metaStored))
	for _, g := range b.groups[:b.ng] {
		dst = le.AppendUint16(dst, g.ch)
		dst = append(dst, byte(g.outKind), byte(g.comp.Level))
		dst = le.AppendUint32(dst, uint32(boolInt(g.hasCap)))
		dst = le.AppendUint32(dst, g.n)
		dst = le.AppendUint32(dst, uint32(g.rawLen()))
		dst = le.AppendUint32(dst, uint32(g.outLen))
		dst = le.AppendUint32(dst, g.crc)
		for _, v := range [...]int64{g.first[0], g.last[0], g.first[1], g.last[1], g.first[2], g.last[2]} {
			dst = le.AppendUint64(dst, uint64(v))
		}
	}
	return dst
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
