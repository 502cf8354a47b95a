package logfmt

import (
	"encoding/binary"
	"hash/crc32"
	"sort"
)

// File layout constants; see docs/log-format.md.
var (
	// fileMagic starts every log. 0x89 catches 7-bit transfers, CR LF
	// catches line-ending conversion, 0x1A stops DOS "type", LF catches
	// LF→CRLF conversion (the PNG trick).
	fileMagic = [8]byte{0x89, 'V', 'R', 'L', '\r', '\n', 0x1a, '\n'}
	// blockSync starts every block, so a scanner can resynchronize
	// after damaged bytes.
	blockSync = [4]byte{'V', 'R', 'B', 'K'}
	// trailerMagic ends a closed log.
	trailerMagic = [8]byte{'V', 'R', 'L', 'E', 'N', 'D', '\r', '\n'}
)

const (
	// VersionMajor is the format's major version: readers refuse files
	// with a larger major version.
	VersionMajor = 1
	// VersionMinor is the format's minor version: additions that older
	// readers may ignore (new block kinds, appended fields).
	VersionMinor = 1

	preludeSize     = 16 // magic, major u16, minor u16, crc32c u32
	blockHeaderSize = 24 // sync, kind, flags, reserved, metaLen, dataLen, metaCRC, headerCRC
	trailerSize     = 24 // footer offset u64, reserved u32, crc u32, magic

	chunkPrefixSize = 48
	groupEntrySize  = 72

	maxSection = 1<<32 - 1 // section lengths are u32
)

// Record flags in the record metadata stream.
const (
	rfStamp   = 1 << 0 // capture delta and seq delta follow
	rfPubID   = 1 << 1 // publisher id follows (uvarint length + bytes)
	rfPubSame = 1 << 2 // publisher id equals the previous one of this group
	rfPubSN   = 1 << 3 // publisher sequence number delta follows
	rfHeader  = 1 << 4 // header length follows
	rfKnown   = rfStamp | rfPubID | rfPubSame | rfPubSN | rfHeader
)

// Block kinds.
const (
	kindHeader  = 1
	kindChannel = 2
	kindChunk   = 3
	kindDrops   = 4
	kindFooter  = 5
)

func kindName(k byte) string {
	switch k {
	case kindHeader:
		return "header block"
	case kindChannel:
		return "channel block"
	case kindChunk:
		return "chunk"
	case kindDrops:
		return "drops block"
	case kindFooter:
		return "footer block"
	}
	return "block"
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

var le = binary.LittleEndian

// blockHeader is the fixed 24-byte header in front of every block.
type blockHeader struct {
	kind    byte
	metaLen uint32
	dataLen uint32
	metaCRC uint32
}

func appendBlockHeader(dst []byte, h blockHeader) []byte {
	start := len(dst)
	dst = append(dst, blockSync[:]...)
	dst = append(dst, h.kind, 0, 0, 0)
	dst = le.AppendUint32(dst, h.metaLen)
	dst = le.AppendUint32(dst, h.dataLen)
	dst = le.AppendUint32(dst, h.metaCRC)
	return le.AppendUint32(dst, crc(dst[start:start+20]))
}

// parseBlockHeader checks sync marker and header CRC. It does not check
// lengths against limits.
func parseBlockHeader(b []byte) (blockHeader, error) {
	if len(b) < blockHeaderSize {
		return blockHeader{}, ErrTornTail
	}
	if [4]byte(b[0:4]) != blockSync {
		return blockHeader{}, ErrBadMagic
	}
	if crc(b[:20]) != le.Uint32(b[20:24]) {
		return blockHeader{}, ErrBadCRC
	}
	if b[5] != 0 || b[6] != 0 || b[7] != 0 {
		return blockHeader{}, ErrMalformed
	}
	return blockHeader{kind: b[4], metaLen: le.Uint32(b[8:]), dataLen: le.Uint32(b[12:]), metaCRC: le.Uint32(b[16:])}, nil
}

func (h blockHeader) size() int64 { return blockHeaderSize + int64(h.metaLen) + int64(h.dataLen) }

// appendBlock appends a whole data-less block with the given body.
func appendBlock(dst []byte, kind byte, body []byte) []byte {
	dst = appendBlockHeader(dst, blockHeader{kind: kind, metaLen: uint32(len(body)), metaCRC: crc(body)})
	return append(dst, body...)
}

func appendPrelude(dst []byte) []byte {
	dst = append(dst, fileMagic[:]...)
	dst = le.AppendUint16(dst, VersionMajor)
	dst = le.AppendUint16(dst, VersionMinor)
	return le.AppendUint32(dst, crc(dst[len(dst)-12:]))
}

func appendTrailer(dst []byte, footerOff int64) []byte {
	start := len(dst)
	dst = le.AppendUint64(dst, uint64(footerOff))
	dst = le.AppendUint32(dst, 0)
	dst = le.AppendUint32(dst, crc(dst[start:start+12]))
	return append(dst, trailerMagic[:]...)
}

// parseTrailer returns the footer offset, or ok=false.
func parseTrailer(b []byte) (int64, bool) {
	if len(b) != trailerSize || [8]byte(b[16:24]) != trailerMagic {
		return 0, false
	}
	if crc(b[:12]) != le.Uint32(b[12:16]) {
		return 0, false
	}
	return int64(le.Uint64(b[0:8])), true
}

// ---- little helpers to build bodies ----

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func appendMap(dst []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dst = binary.AppendUvarint(dst, uint64(len(keys)))
	for _, k := range keys {
		dst = appendString(dst, k)
		dst = appendString(dst, m[k])
	}
	return dst
}

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// dec reads a body; the first out-of-range read sets bad and every later
// read returns zero values, so parsers check once at the end.
type dec struct {
	b   []byte
	bad bool
}

func (d *dec) take(n int) []byte {
	if d.bad || n < 0 || n > len(d.b) {
		d.bad = true
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	return p
}

func (d *dec) u8() uint8 {
	p := d.take(1)
	if p == nil {
		return 0
	}
	return p[0]
}

func (d *dec) u16() uint16 {
	p := d.take(2)
	if p == nil {
		return 0
	}
	return le.Uint16(p)
}

func (d *dec) u32() uint32 {
	p := d.take(4)
	if p == nil {
		return 0
	}
	return le.Uint32(p)
}

func (d *dec) u64() uint64 {
	p := d.take(8)
	if p == nil {
		return 0
	}
	return le.Uint64(p)
}

func (d *dec) i64() int64 { return int64(d.u64()) }

func (d *dec) uvarint() uint64 {
	if d.bad {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a uvarint element count and checks that at least
// minSize bytes per element remain, so a count never drives an
// allocation larger than the (already bounded) body.
func (d *dec) count(minSize int) int {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)/max(minSize, 1)) {
		d.bad = true
		return 0
	}
	return int(n)
}

func (d *dec) bytes() []byte {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		return nil
	}
	return d.take(int(n))
}

func (d *dec) str() string { return string(d.bytes()) }

func (d *dec) strMap() map[string]string {
	n := d.count(2)
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for i := 0; i < n && !d.bad; i++ {
		k := d.str()
		m[k] = d.str()
	}
	return m
}

// sub reads a uvarint-length-prefixed sub-structure. Readers ignore bytes
// a sub-structure has beyond the fields they know (appended fields of a
// later minor version).
func (d *dec) sub() *dec { return &dec{b: d.bytes(), bad: d.bad} }
