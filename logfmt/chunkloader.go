// The chunk loader reads one chunk's bytes and checks them: block header,
// meta section CRC, payload block CRCs, bounded decompression. Reader,
// Verify and Recover share it.

package logfmt

import (
	"fmt"
	"hash/crc32"
	"io"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// chunkLoader reads chunks of one file, counting the bytes it reads. Its
// zstd decoder is created on first use.
type chunkLoader struct {
	ra     io.ReaderAt
	size   int64
	opts   ReaderOptions
	mapped []byte // the file mapped read-only (ReaderOptions.Map), or nil

	bytesRead atomic.Int64
	decOnce   sync.Once
	dec       *zstd.Decoder
	decErr    error
}

// ReadAt reads through the byte counter.
func (l *chunkLoader) ReadAt(p []byte, off int64) (int, error) {
	n, err := l.ra.ReadAt(p, off)
	l.bytesRead.Add(int64(n))
	return n, err
}

// close releases the decoder.
func (l *chunkLoader) close() {
	if l.dec != nil {
		l.dec.Close()
	}
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
	dec      recordDecoder
	metaAt   int64 // file offset of the stored record metadata, for errors
}

// loadChunk reads and checks one chunk and appends its decoded record
// metadata to out; unless metaOnly it also reads the payload blocks of
// the wanted channels (all if want is nil).
func (l *chunkLoader) loadChunk(lc *loadedChunk, ci *ChunkInfo, want []bool, metaOnly bool, out []metaEntry, slot uint16) ([]metaEntry, error) {
	if err := l.openChunk(lc, ci, want, metaOnly, slot); err != nil {
		return out, err
	}
	start := len(out)
	out, err := lc.dec.decode(out, len(lc.metaRaw))
	if err != nil {
		return out[:start], lc.decodeError(l.opts.Name, err)
	}
	return out, nil
}

// checkPayloads checks the CRC of each payload block of a chunk, reading
// its data section through buf in pieces of at most 1 MiB.
func (l *chunkLoader) checkPayloads(ci *ChunkInfo, groups []groupEntry, buf *[]byte) *CorruptionError {
	if cap(*buf) < 1<<20 {
		*buf = make([]byte, 1<<20)
	}
	b := (*buf)[:cap(*buf)]
	dataAt := ci.Offset + blockHeaderSize + int64(ci.MetaLen)
	for _, g := range groups {
		at := dataAt + int64(g.dataOff)
		var sum uint32
		for done := int64(0); done < int64(g.storedLen); {
			n := min(int64(len(b)), int64(g.storedLen)-done)
			if _, err := l.ReadAt(b[:n], at+done); err != nil {
				return corrupt(l.opts.Name, at, payloadBlock(g.channel), "", err)
			}
			sum = crc32.Update(sum, castagnoli, b[:n])
			done += n
		}
		if sum != g.crc {
			return corrupt(l.opts.Name, at, payloadBlock(g.channel), fmt.Sprintf("crc32c %#08x", g.crc), ErrBadCRC)
		}
	}
	return nil
}

// sized returns b resized to n bytes, reallocated with an eighth more
// room when too small: the chunks of a log differ by a record or two, so
// exactly sized buffers would be reallocated at every new largest chunk.
func sized(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n, n+n/8)
	}
	return b[:n]
}

// payloadBlock names a channel's payload block in errors (built only for
// an error: a chunk of 110 KiB is read in tens of microseconds).
func payloadBlock(ch uint16) string { return fmt.Sprintf("payload block of channel %d", ch) }

// timeRange is the receive time ranges of n records.
type timeRange struct {
	minMono, maxMono, minWall, maxWall int64
	n                                  int
}

// checkRecords decodes every record of the opened chunk in batches (into
// scratch, overwritten) and checks them against its directory, then
// rewinds the decoder for the caller to stream them. Memory stays that
// of one batch however many records the chunk holds.
func (lc *loadedChunk) checkRecords(name string, scratch *[]metaEntry) (timeRange, error) {
	var tr timeRange
	for !lc.dec.done() {
		es, err := lc.dec.decode((*scratch)[:0], streamBatch)
		*scratch = es[:0]
		if err != nil {
			return tr, lc.decodeError(name, err)
		}
		for i := range es {
			if tr.n == 0 {
				tr = timeRange{es[i].mono, es[i].mono, es[i].wall, es[i].wall, 0}
			}
			tr.minMono, tr.maxMono = min(tr.minMono, es[i].mono), max(tr.maxMono, es[i].mono)
			tr.minWall, tr.maxWall = min(tr.minWall, es[i].wall), max(tr.maxWall, es[i].wall)
			tr.n++
		}
	}
	lc.dec.rewind()
	return tr, nil
}

// decodeError places a failure of the chunk's record metadata at its offset.
func (lc *loadedChunk) decodeError(name string, err error) error {
	return corrupt(name, lc.metaAt, "chunk record metadata", "", err)
}

// openChunk reads and checks one chunk's meta section and decompresses
// its record metadata, ready for lc.dec; unless metaOnly it also reads
// the payload blocks of the wanted channels (all if want is nil).
func (l *chunkLoader) openChunk(lc *loadedChunk, ci *ChunkInfo, want []bool, metaOnly bool, slot uint16) error {
	o := &l.opts
	name := o.Name
	n := blockHeaderSize + int(ci.MetaLen)
	if int64(ci.MetaLen) > o.MaxChunkSize || int64(ci.DataLen) > o.MaxChunkSize {
		return corrupt(name, ci.Offset, "chunk", fmt.Sprintf("sections <= %d bytes", o.MaxChunkSize), ErrTooLarge)
	}
	if ci.Offset < 0 || ci.Offset+ci.Size() > l.size {
		return corrupt(name, ci.Offset, "chunk", "a chunk inside the file", ErrTornTail)
	}
	lc.buf = sized(lc.buf, n)
	if _, err := l.ReadAt(lc.buf, ci.Offset); err != nil {
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
	raw, err := l.decompress(lc.cm.metaKind, lc.cm.metaStored, lc.cm.metaRawLen, lc.metaDec)
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
		var stored []byte
		mapped := l.mapped != nil && at+int64(g.storedLen) <= int64(len(l.mapped))
		switch {
		case mapped:
			// A view of the map: no copy (openChunk checked the chunk lies
			// inside the file).
			stored = l.mapped[at : at+int64(g.storedLen) : at+int64(g.storedLen)]
			l.bytesRead.Add(int64(len(stored)))
		case g.kind == CompressionNone:
			lc.dataBufs[i] = sized(lc.dataBufs[i], int(g.storedLen))
			stored = lc.dataBufs[i]
		default:
			lc.readBuf = sized(lc.readBuf, int(g.storedLen))
			stored = lc.readBuf
		}
		// An empty block (records without payload) reads nothing: a reader
		// over bytes reports EOF for a read of none at its end.
		if !mapped {
			if _, err := l.ReadAt(stored, at); err != nil && len(stored) > 0 {
				return fmt.Errorf("%s: read %s at %d: %w", name, payloadBlock(g.channel), at, err)
			}
		}
		if crc(stored) != g.crc {
			return corrupt(name, at, payloadBlock(g.channel), fmt.Sprintf("crc32c %#08x", g.crc), ErrBadCRC)
		}
		d, err := l.decompress(g.kind, stored, g.rawLen, lc.dataBufs[i])
		if err != nil {
			return corrupt(name, at, payloadBlock(g.channel), "", err)
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
