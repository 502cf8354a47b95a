package mcapexport

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"sort"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The MCAP writer of an export, written for the bytes it moves: a chunk's
// records are gathered as a list of pieces, small ones (record headers,
// JSON and protobuf message heads) in one buffer and large ones (a frame's
// pixels) as references to the caller's bytes when they stay valid until
// Close (MCAPOptions.Stable: the log's memory map), so an
// uncompressed chunk is written with one vectored write straight from the
// log's pages, no copy in user space. Compressed chunks stream their
// records into the compressor (which copies them once, as it must). The
// CRC-32 of each chunk's records is computed once and folded into the data
// section's CRC with crc32Combine rather than computed a second time.
//
// The records, the message indexes after each chunk, the chunk indexes,
// the statistics and the summary (schemas, channels, statistics, chunk
// indexes, metadata indexes, summary offsets) follow the MCAP
// specification as github.com/foxglove/mcap/go/mcap writes them; Check
// and the reference readers read them back.

// refMin is the smallest piece referenced rather than copied: below it a
// copy into the chunk's buffer is cheaper than one more iovec.
const refMin = 64 << 10

// vectorWriter is an output that writes several buffers in one call
// (output.File, with writev).
type vectorWriter interface {
	WriteBuffers(bufs [][]byte) (int64, error)
}

// rangeWriter is an output that copies a range of a file to its end
// (outfile.File, with copy_file_range).
type rangeWriter interface {
	CopyRange(src *os.File, off, n int64) (int64, error)
}

// fileRange says how a message's tail stays valid until close (ref),
// and where it lies in a file (f, off), if it does.
type fileRange struct {
	ref bool
	f   *os.File
	off int64
}

// piece is a run of a chunk's records: small[lo:hi], or ref when set
// (at off in src, when src is set).
type piece struct {
	ref    []byte
	src    *os.File
	off    int64
	lo, hi int
}

type indexEntry struct{ logTime, offset uint64 }

type rawChannel struct {
	id    uint16
	count uint64       // messages, all chunks
	index []indexEntry // messages of the open chunk
	rec   []byte       // the channel record's body, for the summary
}

type rawWriter struct {
	out   io.Writer
	vw    vectorWriter
	rw    rangeWriter
	off   uint64 // bytes written
	crc   uint32 // CRC-32 of the section being written (data, then summary)
	err   error
	comp  mcap.CompressionFormat
	limit int64

	// the open chunk
	small      []byte
	pieces     []piece
	usize      uint64 // bytes of records
	ucrc       uint32 // their CRC-32
	start, end uint64
	nmsg       uint64
	zbuf       bytes.Buffer
	zw         interface {
		io.WriteCloser
		Reset(io.Writer)
	}

	schemas  []*mcap.Schema
	channels []*rawChannel // by id order of creation
	byID     map[uint16]*rawChannel
	chunks   []*mcap.ChunkIndex
	metas    []*mcap.MetadataIndex
	stats    mcap.Statistics
	scratch  []byte
	iov      [][]byte
}

type lz4Writer struct{ *lz4.Writer }

func (w lz4Writer) Reset(out io.Writer) { w.Writer.Reset(out) }

func newRawWriter(out io.Writer, comp mcap.CompressionFormat, chunkSize int64) (*rawWriter, error) {
	w := &rawWriter{out: out, comp: comp, limit: chunkSize, byID: map[uint16]*rawChannel{},
		start: math.MaxUint64}
	w.vw, _ = out.(vectorWriter)
	w.rw, _ = out.(rangeWriter)
	switch comp {
	case mcap.CompressionZSTD:
		zw, err := zstd.NewWriter(&w.zbuf, zstd.WithEncoderLevel(zstd.SpeedDefault))
		if err != nil {
			return nil, err
		}
		w.zw = zw
	case mcap.CompressionLZ4:
		lw := lz4.NewWriter(&w.zbuf)
		if err := lw.Apply(lz4.CompressionLevelOption(lz4.Level3)); err != nil {
			return nil, err
		}
		w.zw = lz4Writer{lw}
	}
	w.write(mcap.Magic)
	return w, nil
}

// ---- encoding helpers ----

func appendRecordHead(b []byte, op mcap.OpCode, n int) []byte {
	return binary.LittleEndian.AppendUint64(append(b, byte(op)), uint64(n))
}

func appendStr(b []byte, s string) []byte {
	return append(binary.LittleEndian.AppendUint32(b, uint32(len(s))), s...)
}

func appendMap(b []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	n := 0
	for k, v := range m {
		keys = append(keys, k)
		n += 8 + len(k) + len(v)
	}
	sort.Strings(keys)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	for _, k := range keys {
		b = appendStr(appendStr(b, k), m[k])
	}
	return b
}

// ---- output ----

// write writes b to the file, adding it to the section's CRC.
func (w *rawWriter) write(b []byte) {
	if w.err != nil {
		return
	}
	w.crc = crc32.Update(w.crc, crc32.IEEETable, b)
	_, w.err = w.out.Write(b)
	w.off += uint64(len(b))
}

// writeRecord writes a record outside chunks.
func (w *rawWriter) writeRecord(op mcap.OpCode, body []byte) {
	w.scratch = append(appendRecordHead(w.scratch[:0], op, len(body)), body...)
	w.write(w.scratch)
}

// header writes the header record.
func (w *rawWriter) header(profile, library string) {
	w.writeRecord(mcap.OpHeader, appendStr(appendStr(nil, profile), library))
}

// ---- the open chunk ----

// add appends b to the open chunk's records, copied.
func (w *rawWriter) add(b []byte) {
	w.usize += uint64(len(b))
	w.ucrc = crc32.Update(w.ucrc, crc32.IEEETable, b)
	if w.zw != nil {
		if w.err == nil {
			_, w.err = w.zw.Write(b)
		}
		return
	}
	lo := len(w.small)
	w.small = append(w.small, b...)
	if n := len(w.pieces); n > 0 && w.pieces[n-1].ref == nil && w.pieces[n-1].hi == lo {
		w.pieces[n-1].hi = len(w.small)
	} else {
		w.pieces = append(w.pieces, piece{lo: lo, hi: len(w.small)})
	}
}

// addRef appends b, which stays valid until close (at src.off in src.f,
// if src.f is set): referenced instead of copied when the chunk is
// written as it is and b is large.
func (w *rawWriter) addRef(b []byte, src fileRange) {
	if w.zw != nil || len(b) < refMin {
		w.add(b)
		return
	}
	w.usize += uint64(len(b))
	w.ucrc = crc32.Update(w.ucrc, crc32.IEEETable, b)
	w.pieces = append(w.pieces, piece{ref: b, src: src.f, off: src.off})
}

// schema writes a schema record into the data section.
func (w *rawWriter) schema(s *mcap.Schema) {
	b := binary.LittleEndian.AppendUint16(w.scratch[:0], s.ID)
	b = appendStr(appendStr(b, s.Name), s.Encoding)
	b = append(binary.LittleEndian.AppendUint32(b, uint32(len(s.Data))), s.Data...)
	w.scratch = b
	w.addRecord(mcap.OpSchema, b)
	w.schemas = append(w.schemas, s)
	w.stats.SchemaCount++
}

// channel writes a channel record into the data section.
func (w *rawWriter) channel(c *mcap.Channel) {
	b := binary.LittleEndian.AppendUint16(nil, c.ID)
	b = binary.LittleEndian.AppendUint16(b, c.SchemaID)
	b = appendStr(appendStr(b, c.Topic), c.MessageEncoding)
	b = appendMap(b, c.Metadata)
	rc := &rawChannel{id: c.ID, rec: b}
	w.addRecord(mcap.OpChannel, b)
	w.channels = append(w.channels, rc)
	w.byID[c.ID] = rc
	w.stats.ChannelCount++
}

// addRecord adds a small record to the open chunk.
func (w *rawWriter) addRecord(op mcap.OpCode, body []byte) {
	var h [9]byte
	w.add(appendRecordHead(h[:0], op, len(body)))
	w.add(body)
}

// metadata writes a metadata record (outside chunks) and indexes it.
func (w *rawWriter) metadata(name string, md map[string]string) {
	body := appendMap(appendStr(nil, name), md)
	at := w.off
	w.writeRecord(mcap.OpMetadata, body)
	w.metas = append(w.metas, &mcap.MetadataIndex{Offset: at, Length: uint64(9 + len(body)), Name: name})
	w.stats.MetadataCount++
}

// message adds a message record whose data is head then tail to the open
// chunk (tail referenced, see addRef, if ref: it stays valid until close),
// and seals the chunk once it holds more than the chunk size.
func (w *rawWriter) message(ch uint16, seq uint32, logTime, pubTime uint64, head, tail []byte, src fileRange) error {
	c := w.byID[ch]
	if c == nil {
		return fmt.Errorf("unknown channel %d", ch)
	}
	c.index = append(c.index, indexEntry{logTime, w.usize})
	var h [9 + 2 + 4 + 8 + 8]byte
	b := appendRecordHead(h[:0], mcap.OpMessage, 2+4+8+8+len(head)+len(tail))
	b = binary.LittleEndian.AppendUint16(b, ch)
	b = binary.LittleEndian.AppendUint32(b, seq)
	b = binary.LittleEndian.AppendUint64(b, logTime)
	b = binary.LittleEndian.AppendUint64(b, pubTime)
	w.add(b)
	w.add(head)
	if src.ref {
		w.addRef(tail, src)
	} else if len(tail) > 0 {
		w.add(tail)
	}
	c.count++
	w.nmsg++
	w.start, w.end = min(w.start, logTime), max(w.end, logTime)
	st := &w.stats
	if st.MessageCount == 0 || logTime < st.MessageStartTime {
		st.MessageStartTime = logTime
	}
	st.MessageEndTime = max(st.MessageEndTime, logTime)
	st.MessageCount++
	if int64(w.usize) > w.limit {
		w.flushChunk()
	}
	return w.err
}

// flushChunk writes the open chunk record and its message indexes.
func (w *rawWriter) flushChunk() {
	if w.usize == 0 || w.err != nil {
		return
	}
	var records []piece
	var stored uint64
	if w.zw != nil {
		if w.err = w.zw.Close(); w.err != nil {
			return
		}
		records = []piece{{ref: w.zbuf.Bytes()}}
		stored = uint64(w.zbuf.Len())
	} else {
		for _, p := range w.pieces {
			if p.ref == nil {
				p.ref = w.small[p.lo:p.hi]
			}
			records = append(records, p)
		}
		stored = w.usize
	}
	var start, end uint64
	if w.nmsg > 0 {
		start, end = w.start, w.end
	}
	top := 8 + 8 + 8 + 4 + 4 + len(w.comp) + 8
	at := w.off
	hb := appendRecordHead(w.scratch[:0], mcap.OpChunk, top+int(stored))
	hb = binary.LittleEndian.AppendUint64(hb, start)
	hb = binary.LittleEndian.AppendUint64(hb, end)
	hb = binary.LittleEndian.AppendUint64(hb, w.usize)
	hb = binary.LittleEndian.AppendUint32(hb, w.ucrc)
	hb = appendStr(hb, string(w.comp))
	hb = binary.LittleEndian.AppendUint64(hb, stored)
	hlen := len(hb)
	// The message indexes go into the same vectored write, after the records.
	offsets := map[uint16]uint64{}
	idxAt := at + uint64(hlen) + stored
	for _, c := range w.channels {
		if len(c.index) == 0 {
			continue
		}
		offsets[c.id] = idxAt + uint64(len(hb)-hlen)
		hb = appendRecordHead(hb, mcap.OpMessageIndex, 2+4+16*len(c.index))
		hb = binary.LittleEndian.AppendUint16(hb, c.id)
		hb = binary.LittleEndian.AppendUint32(hb, uint32(16*len(c.index)))
		for _, e := range c.index {
			hb = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(hb, e.logTime), e.offset)
		}
		c.index = c.index[:0]
	}
	w.scratch = hb
	// The data section's CRC: the chunk header, then the records (whose
	// CRC the uncompressed case has, folded in), then the indexes.
	w.crc = crc32.Update(w.crc, crc32.IEEETable, hb[:hlen])
	if w.zw != nil {
		w.crc = crc32.Update(w.crc, crc32.IEEETable, records[0].ref)
	} else {
		w.crc = crc32Combine(w.crc, w.ucrc, w.usize)
	}
	w.crc = crc32.Update(w.crc, crc32.IEEETable, hb[hlen:])
	n, err := w.writeChunk(hb[:hlen], records, hb[hlen:])
	w.off += uint64(n)
	if err != nil {
		w.err = err
		return
	}
	w.chunks = append(w.chunks, &mcap.ChunkIndex{
		MessageStartTime: start, MessageEndTime: end,
		ChunkStartOffset: at, ChunkLength: uint64(hlen) + stored,
		MessageIndexOffsets: offsets, MessageIndexLength: uint64(len(hb) - hlen),
		Compression: w.comp, CompressedSize: stored, UncompressedSize: w.usize,
	})
	w.stats.ChunkCount++
	w.small, w.pieces = w.small[:0], w.pieces[:0]
	w.usize, w.ucrc, w.nmsg, w.start, w.end = 0, 0, 0, math.MaxUint64, 0
	if w.zw != nil {
		w.zbuf.Reset()
		w.zw.Reset(&w.zbuf)
	}
}

// writeChunk writes a chunk record's head, its records and what follows
// them (its message indexes): in vectored writes, but for the records in
// a file (piece.src), which the output copies from there when it can
// (rangeWriter).
func (w *rawWriter) writeChunk(head []byte, records []piece, tail []byte) (int64, error) {
	w.iov = append(w.iov[:0], head)
	var n int64
	for _, p := range records {
		if p.src == nil || w.rw == nil {
			w.iov = append(w.iov, p.ref)
			continue
		}
		k, err := w.writeVec(w.iov)
		n += k
		if err != nil {
			return n, err
		}
		clear(w.iov) // drop the references to the caller's bytes
		w.iov = w.iov[:0]
		k, err = w.rw.CopyRange(p.src, p.off, int64(len(p.ref)))
		if n += k; err != nil {
			return n, err
		}
	}
	k, err := w.writeVec(append(w.iov, tail))
	clear(w.iov)
	return n + k, err
}

// writeVec writes bufs in order, in one vectored write when the output
// takes one.
func (w *rawWriter) writeVec(bufs [][]byte) (int64, error) {
	if w.vw != nil {
		return w.vw.WriteBuffers(bufs)
	}
	var n int64
	for _, b := range bufs {
		k, err := w.out.Write(b)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// close seals the open chunk and writes the data end record, the summary
// section, the summary offsets, the footer and the closing magic.
func (w *rawWriter) close() error {
	w.flushChunk()
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], w.crc)
	w.writeRecord(mcap.OpDataEnd, b[:])
	w.crc = 0 // the summary's CRC from here
	summaryStart := w.off
	var groups []*mcap.SummaryOffset
	group := func(op mcap.OpCode, write func()) {
		at := w.off
		write()
		if w.off > at {
			groups = append(groups, &mcap.SummaryOffset{GroupOpcode: op, GroupStart: at, GroupLength: w.off - at})
		}
	}
	group(mcap.OpSchema, func() {
		for _, s := range w.schemas {
			body := binary.LittleEndian.AppendUint16(nil, s.ID)
			body = appendStr(appendStr(body, s.Name), s.Encoding)
			body = append(binary.LittleEndian.AppendUint32(body, uint32(len(s.Data))), s.Data...)
			w.writeRecord(mcap.OpSchema, body)
		}
	})
	group(mcap.OpChannel, func() {
		for _, c := range w.channels {
			w.writeRecord(mcap.OpChannel, c.rec)
		}
	})
	group(mcap.OpStatistics, func() {
		st := &w.stats
		body := binary.LittleEndian.AppendUint64(nil, st.MessageCount)
		body = binary.LittleEndian.AppendUint16(body, st.SchemaCount)
		body = binary.LittleEndian.AppendUint32(body, st.ChannelCount)
		body = binary.LittleEndian.AppendUint32(body, st.AttachmentCount)
		body = binary.LittleEndian.AppendUint32(body, st.MetadataCount)
		body = binary.LittleEndian.AppendUint32(body, st.ChunkCount)
		body = binary.LittleEndian.AppendUint64(body, st.MessageStartTime)
		body = binary.LittleEndian.AppendUint64(body, st.MessageEndTime)
		var counts []byte
		for _, c := range w.channels {
			if c.count > 0 {
				counts = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint16(counts, c.id), c.count)
			}
		}
		body = append(binary.LittleEndian.AppendUint32(body, uint32(len(counts))), counts...)
		w.writeRecord(mcap.OpStatistics, body)
	})
	group(mcap.OpChunkIndex, func() {
		for _, ci := range w.chunks {
			body := binary.LittleEndian.AppendUint64(nil, ci.MessageStartTime)
			body = binary.LittleEndian.AppendUint64(body, ci.MessageEndTime)
			body = binary.LittleEndian.AppendUint64(body, ci.ChunkStartOffset)
			body = binary.LittleEndian.AppendUint64(body, ci.ChunkLength)
			body = binary.LittleEndian.AppendUint32(body, uint32(10*len(ci.MessageIndexOffsets)))
			for _, c := range w.channels {
				if off, ok := ci.MessageIndexOffsets[c.id]; ok {
					body = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint16(body, c.id), off)
				}
			}
			body = binary.LittleEndian.AppendUint64(body, ci.MessageIndexLength)
			body = appendStr(body, string(ci.Compression))
			body = binary.LittleEndian.AppendUint64(body, ci.CompressedSize)
			body = binary.LittleEndian.AppendUint64(body, ci.UncompressedSize)
			w.writeRecord(mcap.OpChunkIndex, body)
		}
	})
	group(mcap.OpMetadataIndex, func() {
		for _, mi := range w.metas {
			body := binary.LittleEndian.AppendUint64(nil, mi.Offset)
			body = binary.LittleEndian.AppendUint64(body, mi.Length)
			w.writeRecord(mcap.OpMetadataIndex, appendStr(body, mi.Name))
		}
	})
	if len(groups) == 0 {
		summaryStart = 0
	}
	offsetStart := w.off
	for _, g := range groups {
		body := append([]byte{byte(g.GroupOpcode)}, binary.LittleEndian.AppendUint64(nil, g.GroupStart)...)
		w.writeRecord(mcap.OpSummaryOffset, binary.LittleEndian.AppendUint64(body, g.GroupLength))
	}
	f := appendRecordHead(nil, mcap.OpFooter, 8+8+4)
	f = binary.LittleEndian.AppendUint64(f, summaryStart)
	f = binary.LittleEndian.AppendUint64(f, offsetStart)
	w.write(f)
	binary.LittleEndian.PutUint32(b[:], w.crc)
	w.write(b[:])
	w.write(mcap.Magic)
	return w.err
}

// ---- CRC-32 (IEEE) of a concatenation, from the CRCs of its parts ----

// multModP multiplies a and b modulo the (reflected) IEEE polynomial.
func multModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; m != 0; m >>= 1 {
		if a&m != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ crc32.IEEE
		} else {
			b >>= 1
		}
	}
	return p
}

// x2n[k] is x^(2^k) modulo the polynomial.
var x2n = func() (t [64]uint32) {
	p := uint32(1) << 30 // x^1
	for k := range t {
		t[k] = p
		p = multModP(p, p)
	}
	return
}()

// crc32Combine returns the CRC-32 of A||B from crcA, crcB and len(B) (as
// zlib's crc32_combine): crcA times x^(8·lenB), plus crcB.
func crc32Combine(crcA, crcB uint32, lenB uint64) uint32 {
	xp := uint32(1) << 31 // x^0
	for k := 3; lenB != 0; lenB, k = lenB>>1, k+1 {
		if lenB&1 != 0 {
			xp = multModP(x2n[k&63], xp)
		}
	}
	return multModP(xp, crcA) ^ crcB
}
