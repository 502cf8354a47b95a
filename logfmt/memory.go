package logfmt

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// Chunks in memory, written out later (record --snapshot): a memory
// writer builds and compresses chunks exactly as a file writer does, but
// hands each sealed chunk to its caller instead of writing it; the caller
// keeps the chunks it wants (the last 30 s, a byte budget) and later
// writes a window of them into an ordinary log with Writer.WriteChunk.
// There is no second format: a kept chunk is the bytes of a chunk block.

// Chunk is a sealed chunk a memory writer kept: the bytes of its chunk
// block (compressed, CRC-protected, position independent), what the index
// says of it, and per channel what the footer's statistics need.
type Chunk struct {
	block  []byte
	info   ChunkInfo // Offset is 0: it is in no file yet
	groups []chunkGroup
}

// chunkGroup is one channel's share of a kept chunk, for the statistics
// of the log it is written into.
type chunkGroup struct {
	channel     uint16
	records     uint32
	raw         uint32
	hasCapture  bool
	first, last [3]int64 // mono, wall, capture
}

// Info describes the chunk: record count, receive-time ranges, channels.
func (c *Chunk) Info() ChunkInfo {
	info := c.info
	info.Channels = slices.Clone(info.Channels)
	return info
}

// Size is the memory the chunk holds: its block's buffer.
func (c *Chunk) Size() int { return cap(c.block) }

// NewMemoryWriter returns a Writer that writes no file: every chunk it
// seals (at ChunkSize, FlushInterval, Flush and Close) goes to keep,
// compressed and complete, in order, on the writer's stage goroutine, and
// belongs to keep from then on. keep may block: the writer then holds
// sealed chunks back as it does for a slow disk (MaxChunksInFlight), and
// Write blocks. Channels get their ids as in a file writer, so a log that
// defines the same channels in the same order can take the chunks
// (WriteChunk). Stats count records and raw bytes; Chunks and
// BytesWritten stay at what went to the discarded stream.
func NewMemoryWriter(opts WriterOptions, keep func(*Chunk)) (*Writer, error) {
	if keep == nil {
		return nil, errors.New("logfmt: NewMemoryWriter needs a keep function")
	}
	opts.memory = &memorySink{keep: keep, free: make(chan []byte, recycled)}
	opts.Sync = SyncNone
	return newWriter(io.Discard, "", opts)
}

// memorySink is where a memory writer's chunks go, and the buffers of
// chunks its caller handed back (Recycle), so that a buffer of recent
// chunks costs no garbage collection at camera rates.
type memorySink struct {
	keep func(*Chunk)
	free chan []byte
}

// recycled is how many buffers a memory writer keeps for its next chunks.
const recycled = 8

// Recycle hands back a chunk kept by w, a memory writer, that its caller
// no longer needs: the next chunks are built in its memory. c must not be
// used afterwards, nor written by a Writer that has not yet returned from
// Flush or Close.
func (w *Writer) Recycle(c *Chunk) {
	if m := w.opts.memory; m != nil {
		select {
		case m.free <- c.block[:0]:
		default:
		}
		c.block = nil
	}
}

// kept copies a compressed chunk job into a Chunk, in a recycled buffer
// when one is large enough: the job's buffers are reused for the next
// chunk.
func (m *memorySink) kept(j *job) *Chunk {
	n := len(j.head)
	for _, g := range j.b.groups[:j.b.ng] {
		n += g.outLen
	}
	var block []byte
	select {
	case b := <-m.free:
		if fits(cap(b), n) {
			block = b[:0]
		}
	default:
	}
	if block == nil {
		block = make([]byte, 0, n+n/32+4096) // room for the next chunks' sizes to vary
	}
	block = append(block, j.head...)
	var pieces [][]byte
	c := &Chunk{info: j.info, groups: make([]chunkGroup, 0, j.b.ng)}
	c.info.Channels = slices.Clone(j.info.Channels)
	for _, g := range j.b.groups[:j.b.ng] {
		for _, p := range g.pieces(pieces[:0]) {
			block = append(block, p...)
		}
		c.groups = append(c.groups, g.summary())
	}
	c.block = block
	return c
}

// fits reports whether a recycled buffer of capacity c may hold a chunk
// of n bytes: large enough, and not much larger, since Size counts the
// capacity. A small chunk (sealed by the flush interval) in the buffer of
// a frame's chunk would count megabytes for kilobytes, and a caller that
// budgets Size would hold less and less time at a constant rate.
func fits(c, n int) bool { return c >= n && c <= n+n/8+64<<10 }

// jobSealed is a kept chunk queued for the stage to write as it is.
const jobSealed = jobBarrier + 1

// WriteChunk writes the records of c (a chunk a memory writer kept) that
// were received in [from, to] (RecvMonoNs, both included) after everything
// written so far: c's block byte for byte when all of its records are in
// the window, else the records in the window again, decoded from c and
// checked as a reader checks them. c's channel ids must be defined in w:
// add the memory writer's channels to w in the order it numbered them. It
// returns the records written.
func (w *Writer) WriteChunk(c *Chunk, from, to int64) (uint64, error) {
	switch {
	case c.info.MaxMonoNs < from || c.info.MinMonoNs > to:
		return 0, nil
	case c.info.MinMonoNs >= from && c.info.MaxMonoNs <= to:
		return uint64(c.info.Records), w.writeKept(c)
	}
	return w.writeTrimmed(c, from, to)
}

// writeKept queues c's block for the stage, after the open chunk.
func (w *Writer) writeKept(c *Chunk) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if err := w.stage.error(); err != nil {
		return err
	}
	for _, g := range c.groups {
		if g.channel == 0 || int(g.channel) >= len(w.chans) {
			return fmt.Errorf("%w: %d (a kept chunk's channel is not defined in this log)", ErrUnknownChannel, g.channel)
		}
	}
	w.sealLocked() // what was written before goes first
	for _, g := range c.groups {
		w.records += uint64(g.records)
		w.rawBytes += uint64(g.raw)
	}
	w.ordered <- &job{kind: jobSealed, head: c.block, info: c.info, kept: c.groups}
	return nil
}

// addGroup accounts for one channel's records of a chunk the stage wrote:
// a kept one (writeKept) or one the writer sealed.
func (s *ChannelStats) addGroup(g chunkGroup) {
	if s.Records == 0 {
		s.FirstMonoNs, s.FirstWallNs = g.first[0], g.first[1]
	}
	s.LastMonoNs, s.LastWallNs = g.last[0], g.last[1]
	if g.hasCapture {
		if !s.HasCapture {
			s.HasCapture, s.FirstCaptureNs = true, g.first[2]
		}
		s.LastCaptureNs = g.last[2]
	}
	s.Records += uint64(g.records)
	s.RawBytes += uint64(g.raw)
}

// writeTrimmed writes the records of c received in [from, to] with Write.
func (w *Writer) writeTrimmed(c *Chunk, from, to int64) (uint64, error) {
	r, err := c.reader()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var n uint64
	it := r.Records(within(from, to, false))
	for it.Next() {
		if err := w.Write(it.Record()); err != nil {
			return n, err
		}
		n++
	}
	return n, it.Err()
}

// RecvStamps are a record's receive stamps.
type RecvStamps struct{ MonoNs, WallNs int64 }

// Span returns the receive stamps of c's first and last records in
// [from, to] (RecvMonoNs, both included), and whether there is one. Only
// the records' metadata is read, not their payloads: a snapshot's window
// is its records, and a chunk straddling the window's edge has no record
// at the edge itself.
func (c *Chunk) Span(from, to int64) (first, last RecvStamps, ok bool, err error) {
	switch {
	case c.info.MaxMonoNs < from || c.info.MinMonoNs > to:
		return first, last, false, nil
	case c.info.MinMonoNs >= from && c.info.MaxMonoNs <= to:
		return RecvStamps{c.info.MinMonoNs, c.info.MinWallNs}, RecvStamps{c.info.MaxMonoNs, c.info.MaxWallNs}, c.info.Records > 0, nil
	}
	r, err := c.reader()
	if err != nil {
		return first, last, false, err
	}
	defer r.Close()
	it := r.Records(within(from, to, true))
	for it.Next() {
		rec := it.Record()
		t := RecvStamps{rec.RecvMonoNs, rec.RecvWallNs}
		if !ok || t.MonoNs < first.MonoNs {
			first = t
		}
		if !ok || t.MonoNs > last.MonoNs {
			last = t
		}
		ok = true
	}
	return first, last, ok, it.Err()
}

// within is the filter of the records received in [from, to], both
// included; to may be math.MaxInt64 (unbounded).
func within(from, to int64, metaOnly bool) Filter {
	end := to + 1
	if to == math.MaxInt64 {
		end = 0 // unbounded
	}
	return Filter{Start: from, End: end, MetaOnly: metaOnly}
}

// reader opens c as a log of its own (prelude, header, c's block), so its
// records are decoded and checked by the reader's code.
func (c *Chunk) reader() (*Reader, error) {
	file := appendPrelude(nil)
	file = appendBlock(file, kindHeader, appendHeaderBody(nil, Header{}))
	file = append(file, c.block...)
	return NewReader(bytes.NewReader(file), int64(len(file)), ReaderOptions{Name: "kept chunk"})
}
