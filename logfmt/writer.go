package logfmt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/vrlog/vrlog/outfile"
)

// SyncPolicy says when the writer calls fdatasync on the file. A process
// crash (kill -9) loses at most FlushInterval of records whatever the
// policy; a power loss loses what was not synced. The default was chosen
// by measurement (docs/log-format.md §13): at 1 kHz states + 1080p30
// frames, syncing every second costs no measurable throughput and cut
// the loss at a real power cut from 8.6–16.8 s (up to the kernel's 30 s
// writeback delay) to 1.1–2.1 s.
type SyncPolicy uint8

const (
	// SyncInterval (the default) syncs at most every
	// WriterOptions.SyncInterval (default 1 s) while data is pending,
	// and at Flush and Close.
	SyncInterval SyncPolicy = iota
	// SyncOnClose syncs once, at Close: a power loss may lose everything
	// the kernel has not written back yet (up to 30 s by default). For
	// outputs made in one go and renamed into place once closed.
	SyncOnClose
	// SyncNone never syncs, not even at Close (benchmarks, scratch files).
	SyncNone
	// SyncOnFlush syncs after every chunk written and on every Flush.
	SyncOnFlush
)

// WriterOptions configures a Writer. The zero value is usable.
type WriterOptions struct {
	// Metadata is stored in the header: note, host, tool version, ...
	Metadata map[string]string
	// CreatedAt is the creation time stored in the header; zero means
	// time.Now(). Set it to make output byte-for-byte reproducible.
	CreatedAt time.Time
	// ChunkSize is the target of uncompressed bytes (payloads + record
	// metadata) per chunk; default 4 MiB. A chunk always holds at least
	// one record, so a larger record makes a larger chunk.
	ChunkSize int
	// FlushInterval bounds how long a record waits before its chunk is
	// sealed and written; default 1 s; negative disables the timer (only
	// ChunkSize, Flush and Close seal chunks).
	FlushInterval time.Duration
	// Sync is the fdatasync policy (default SyncInterval); SyncInterval
	// is its period (default 1 s).
	Sync         SyncPolicy
	SyncInterval time.Duration
	// Concurrency is the number of compression workers; default GOMAXPROCS.
	Concurrency int
	// MaxChunksInFlight bounds sealed chunks waiting for compression or
	// writing (memory bound: about (MaxChunksInFlight+1) chunks);
	// default Concurrency+1.
	MaxChunksInFlight int
	// MetaCompression compresses the record-metadata section of every
	// chunk; default zstd level 1. Use Kind None for output that does not
	// depend on the zstd encoder's version (golden files).
	MetaCompression *Compression
	// MaxRecordSize bounds header+payload of one record; default 256 MiB,
	// at most 1 GiB.
	MaxRecordSize int
	// Overwrite lets Create replace an existing file.
	Overwrite bool
	// DirectIO makes Create write the file with O_DIRECT (Linux): from one
	// aligned buffer to the disk, bypassing the page cache, whose copy into
	// fresh page-cache memory dominates the CPU of a recorder writing
	// hundreds of MB/s. A filesystem that refuses O_DIRECT (tmpfs) gets
	// ordinary writes. NewWriter ignores it.
	DirectIO bool

	memory *memorySink // NewMemoryWriter: sealed chunks go there, not to the file
}

func (o WriterOptions) withDefaults() (WriterOptions, error) {
	if o.ChunkSize == 0 {
		o.ChunkSize = 4 << 20
	}
	if o.ChunkSize < 0 || o.ChunkSize > 1<<30 {
		return o, fmt.Errorf("logfmt: ChunkSize %d out of range 1..1GiB", o.ChunkSize)
	}
	if o.FlushInterval == 0 {
		o.FlushInterval = time.Second
	}
	if o.SyncInterval <= 0 {
		o.SyncInterval = time.Second
	}
	if o.Sync > SyncOnFlush {
		return o, fmt.Errorf("logfmt: unknown sync policy %d", o.Sync)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = runtime.GOMAXPROCS(0)
	}
	if o.MaxChunksInFlight <= 0 {
		o.MaxChunksInFlight = o.Concurrency + 1
	}
	if o.MetaCompression == nil {
		o.MetaCompression = &Compression{Kind: CompressionZstd, Level: 1}
	}
	if err := o.MetaCompression.validate(); err != nil {
		return o, err
	}
	if o.MaxRecordSize == 0 {
		o.MaxRecordSize = 256 << 20
	}
	if o.MaxRecordSize < 0 || o.MaxRecordSize > 1<<30 {
		return o, fmt.Errorf("logfmt: MaxRecordSize %d out of range 1..1GiB", o.MaxRecordSize)
	}
	return o, nil
}

// chanState is the writer's per-channel state.
type chanState struct {
	c     Channel
	epoch uint64 // chunk epoch in which gi is valid
	gi    int
}

// Writer writes a log. Write, AddChannel, AddDrops, Flush and Close may be
// called from several goroutines; records are written in the order Write
// calls complete. Compression runs on worker goroutines; a single writer
// stage writes blocks in order.
type Writer struct {
	opts  WriterOptions
	name  string
	owned io.Closer     // the file, closed by Close when Create opened it
	live  *outfile.Live // Create's file (Remove)

	mu       sync.Mutex
	closed   bool
	chans    []*chanState // by id
	names    map[string]uint16
	cur      *job
	epoch    uint64
	drops    map[uint16]uint64
	dirty    bool // drops changed since the last drops block
	records  uint64
	rawBytes uint64
	dropsSum uint64
	made     int // jobs allocated

	free     chan *job
	work     chan *job
	ordered  chan *job
	ahead    chan *job  // compressed chunks the stage writes before waiting ones (SealAhead)
	inline   compressor // SealAhead's, under mu
	stage    *stage
	wg       sync.WaitGroup
	stopTick chan struct{}
	tickDone chan struct{}
}

// Create creates a log file at path, written in place as it grows (a
// live log that readers may follow), through outfile.CreateLive: a regular
// file is a new inode under its name, holding an exclusive lock until
// Close, so a second writer is refused (outfile.ErrLocked) and a reader
// can tell it is being written; an existing file is refused unless
// opts.Overwrite, and then replaced by a rename, never truncated. An
// existing device, FIFO or socket (/dev/null, a pipe) is written in place
// and sequentially: no sync (the policy applies only to a regular file),
// no O_DIRECT, the footer at the end as always.
func Create(path string, opts WriterOptions) (*Writer, error) {
	l, err := outfile.CreateLive(path, outfile.Options{Force: opts.Overwrite})
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create %s: %w", path, ErrExists)
		}
		return nil, err // outfile names the path
	}
	var out interface {
		io.Writer
		io.Closer
	} = unsynced{l} // a device, FIFO or socket: written, never synced
	if f := l.File(); f != nil && l.Regular() {
		out = lockedFile{f, l}
		if opts.DirectIO {
			if d := openDirect(f, path); d != nil {
				out = d
			}
		}
	}
	w, err := newWriter(out, path, opts)
	if err != nil {
		out.Close()
		l.Remove()
		return nil, err
	}
	w.owned, w.live = out, l
	return w, nil
}

// lockedFile is a regular live file: written and synced through the
// descriptor, closed (and its lock released) through the outfile.Live.
type lockedFile struct {
	*os.File
	l *outfile.Live
}

func (f lockedFile) Close() error { return f.l.Close() }

// unsynced is a live output without a Sync method, so that the sync
// policy does not apply to it.
type unsynced struct{ l *outfile.Live }

func (u unsynced) Write(p []byte) (int, error) { return u.l.Write(p) }
func (u unsynced) Close() error                { return u.l.Close() }

// Synced reports whether the sync policy applies: false for a log Create
// writes onto a device, FIFO or socket (and for NewWriter's output when it
// has no Sync method).
func (w *Writer) Synced() bool { return w.stage.syncF != nil }

// Remove closes the writer and removes the file Create made: for a log
// abandoned before it held anything. A device, FIFO or socket written in
// place is left alone.
func (w *Writer) Remove() error {
	err := w.Close()
	if w.live != nil {
		w.live.Remove()
	}
	return err
}

// NewWriter writes a log to out, which must be positioned at offset 0 of
// an empty file or stream (chunk offsets in the index count from there).
// If out has a Sync() error method (an *os.File does), the sync policy
// uses it. Close does not close out.
func NewWriter(out io.Writer, opts WriterOptions) (*Writer, error) {
	return newWriter(out, "", opts)
}

func newWriter(out io.Writer, name string, opts WriterOptions) (*Writer, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.CreatedAt.IsZero() {
		o.CreatedAt = time.Now()
	}
	w := &Writer{
		opts:    o,
		name:    name,
		chans:   make([]*chanState, 1, 16),
		names:   map[string]uint16{},
		drops:   map[uint16]uint64{},
		free:    make(chan *job, o.MaxChunksInFlight+1),
		work:    make(chan *job, o.MaxChunksInFlight+1),
		ordered: make(chan *job, 2*o.MaxChunksInFlight+16),
		ahead:   make(chan *job, o.MaxChunksInFlight+1),
	}
	w.stage = newStage(out, &w.opts)
	head := appendPrelude(nil)
	head = appendBlock(head, kindHeader, appendHeaderBody(nil, Header{CreatedWallNs: o.CreatedAt.UnixNano(), Metadata: o.Metadata}))
	if err := w.stage.writeRaw(head); err != nil {
		return nil, fmt.Errorf("logfmt: write header: %w", err)
	}
	for i := 0; i < o.Concurrency; i++ {
		w.wg.Add(1)
		go w.compressLoop()
	}
	w.wg.Add(1)
	go func() { defer w.wg.Done(); w.stage.run(w.ordered, w.ahead, w.free) }()
	w.cur = w.newJob()
	if o.FlushInterval > 0 {
		w.stopTick = make(chan struct{})
		w.tickDone = make(chan struct{})
		go w.tickLoop(o.FlushInterval / 2)
	}
	return w, nil
}

func (w *Writer) newJob() *job {
	select {
	case j := <-w.free:
		j.reset()
		return j
	default:
	}
	if w.made < w.opts.MaxChunksInFlight+1 {
		w.made++
		j := &job{kind: jobChunk, done: make(chan struct{}, 1)}
		j.reset()
		return j
	}
	j := <-w.free
	j.reset()
	return j
}

// AddChannel defines a channel and returns its id. Channels may be added
// at any time before Close; names must be unique.
func (w *Writer) AddChannel(c Channel) (uint16, error) {
	if err := c.Compression.validate(); err != nil {
		return 0, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, ErrClosed
	}
	if err := w.stage.error(); err != nil {
		return 0, err
	}
	if _, dup := w.names[c.Name]; dup {
		return 0, fmt.Errorf("logfmt: channel name %q already used", c.Name)
	}
	if len(w.chans) > 0xFFFF {
		return 0, fmt.Errorf("%w: more than 65535 channels", ErrTooLarge)
	}
	c.ID = uint16(len(w.chans))
	meta := make(map[string]string, len(c.Meta))
	for k, v := range c.Meta {
		meta[k] = v
	}
	c.Meta = meta
	if c.Compression.Kind == CompressionZstd {
		c.Compression.Level = c.Compression.level()
	} else {
		c.Compression.Level = 0
	}
	w.chans = append(w.chans, &chanState{c: c, epoch: ^uint64(0)})
	w.names[c.Name] = c.ID
	def := &job{kind: jobBlock, defines: c.ID, block: appendBlock(nil, kindChannel, appendChannelBody(nil, &c))}
	w.stage.define(def) // a chunk sealed ahead may need it before its turn
	w.ordered <- def
	return c.ID, nil
}

// Write appends a record. It copies what it needs: the caller may reuse
// r's buffers when Write returns. An error from an earlier asynchronous
// write (a full disk) is returned here; after it the writer accepts
// nothing more, and the file is readable up to its last complete chunk.
func (w *Writer) Write(r *Record) error {
	_, err := w.write(r, nil)
	return err
}

// ZeroCopyMin is the smallest payload WriteOwned writes from the caller's
// buffer; smaller ones are copied, which costs less than tracking them.
const ZeroCopyMin = 64 << 10

// WriteOwned is Write for a caller that hands r.Payload over: on a
// channel stored uncompressed, a payload of ZeroCopyMin bytes or more is
// written to the file from the caller's buffer, with no copy (large
// camera frames). The caller must not modify r.Payload until the writer
// calls release, exactly once: when the payload is in the file, when the
// write failed, or, if the payload was copied, before WriteOwned returns.
// The header and other fields are copied as in Write. release runs on
// the caller's or the writer's goroutine; it must not block or call the
// Writer.
func (w *Writer) WriteOwned(r *Record, release func()) error {
	kept, err := w.write(r, release)
	if !kept && release != nil {
		release()
	}
	return err
}

// write appends r. With a non-nil release it may keep r.Payload by
// reference (see WriteOwned) and says so.
func (w *Writer) write(r *Record, release func()) (kept bool, err error) {
	size := len(r.Header) + len(r.Payload)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false, ErrClosed
	}
	if w.stage.failed.Load() { // the inlined fast check of stage.error
		return false, w.stage.error()
	}
	if int(r.Channel) >= len(w.chans) || r.Channel == 0 {
		return false, fmt.Errorf("%w: %d", ErrUnknownChannel, r.Channel)
	}
	if size > w.opts.MaxRecordSize {
		return false, fmt.Errorf("%w: record of %d bytes, MaxRecordSize %d", ErrTooLarge, size, w.opts.MaxRecordSize)
	}
	if len(r.PublisherID) > MaxPublisherID {
		return false, fmt.Errorf("%w: publisher id of %d bytes", ErrTooLarge, len(r.PublisherID))
	}
	cs := w.chans[r.Channel]
	b := &w.cur.b
	if cs.epoch != w.epoch {
		cs.gi = b.addGroup(cs.c.ID, cs.c.Compression)
		cs.epoch = w.epoch
	}
	if b.n == 0 {
		w.cur.opened = time.Now()
	}
	if cs.c.Compression.Kind != CompressionNone || len(r.Payload) < ZeroCopyMin {
		release = nil // copy
	}
	b.add(cs.gi, r, release)
	w.records++ // the channel's statistics follow from its group when the chunk is sealed
	w.rawBytes += uint64(size)
	if b.raw >= w.opts.ChunkSize || b.n == 1<<32-1 {
		w.sealLocked()
	}
	return release != nil, nil
}

// AddDrops counts n records of channel lost by the recorder before they
// reached Write. The counts are stored in drops blocks (written with the
// next chunk or flush, so recovery keeps them) and in the footer.
func (w *Writer) AddDrops(channel uint16, n uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || n == 0 {
		return
	}
	w.drops[channel] += n
	w.dropsSum += n
	w.dirty = true
}

// sealLocked hands the open chunk to the compression workers and the
// writer stage, then opens a new one (blocking while MaxChunksInFlight
// chunks are pending).
func (w *Writer) sealLocked() {
	if w.cur.b.n > 0 {
		j := w.cur
		w.work <- j
		w.ordered <- j
		w.cur = w.newJob()
		w.epoch++
	}
	w.queueDrops()
}

// queueDrops queues a drops block if the counts changed since the last.
func (w *Writer) queueDrops() {
	if w.dirty {
		w.dirty = false
		w.ordered <- &job{kind: jobBlock, block: appendBlock(nil, kindDrops, appendDropsBody(nil, w.drops))}
	}
}

// Seal hands the open chunk to compression now, without waiting for it to
// be written (Flush waits). A caller about to write records far from the
// open chunk's in time (a recorder that wrote new states ahead of a
// backlog of older frames) seals first, so that chunks do not overlap in
// time and readers, who order by RecvMonoNs, merge few of them (§10).
func (w *Writer) Seal() error { return w.seal(false) }

// WouldBlock reports whether sealing a chunk now would wait for one sealed
// earlier to be compressed and written (every chunk buffer is in flight):
// a caller with other work (a recorder's small records, behind a backlog
// of large ones) does that first instead of waiting inside Write.
func (w *Writer) WouldBlock() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.made >= w.opts.MaxChunksInFlight+1 && len(w.free) == 0
}

// SealAhead is Seal for a chunk of a few small records that must not wait
// behind large chunks being compressed (a recorder's states behind a
// backlog of camera frames at a slow zstd level): it compresses the open
// chunk on the caller's goroutine and the stage writes it as soon as it is
// between two blocks, ahead of chunks sealed before it that are still
// being compressed (readers order chunks by time, not by position, §10).
// A memory writer's chunk is sealed as by Seal.
func (w *Writer) SealAhead() error { return w.seal(true) }

func (w *Writer) seal(ahead bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if err := w.stage.error(); err != nil {
		return err
	}
	j := w.cur
	if !ahead || j.b.n == 0 || w.opts.memory != nil {
		w.sealLocked()
		return nil
	}
	w.inline.sealChunk(j, *w.opts.MetaCompression)
	j.done <- struct{}{}
	w.ahead <- j
	w.cur = w.newJob()
	w.epoch++
	w.queueDrops()
	return nil
}

// Flush seals the open chunk and returns once everything written so far
// is in the file (and synced under SyncOnFlush and SyncInterval).
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	return w.flushLocked(w.opts.Sync == SyncOnFlush || w.opts.Sync == SyncInterval)
}

func (w *Writer) flushLocked(sync bool) error {
	w.sealLocked()
	b := &job{kind: jobBarrier, sync: sync, result: make(chan error, 1)}
	w.ordered <- b
	return <-b.result
}

func (w *Writer) tickLoop(every time.Duration) {
	defer close(w.tickDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-w.stopTick:
			return
		case <-t.C:
		}
		w.mu.Lock()
		if !w.closed && w.stage.error() == nil {
			w.sealLocked()
			if w.opts.Sync == SyncInterval {
				w.ordered <- &job{kind: jobBarrier, sync: false, tick: true}
			}
		}
		w.mu.Unlock()
	}
}

// Stats returns counters; Chunks and BytesWritten count what the writer
// stage has written so far.
func (w *Writer) Stats() WriterStats {
	w.mu.Lock()
	s := WriterStats{Records: w.records, RawBytes: w.rawBytes, Drops: w.dropsSum}
	w.mu.Unlock()
	w.stage.mu.Lock()
	s.Chunks = uint64(len(w.stage.index))
	s.BytesWritten = w.stage.off
	s.Syncs = w.stage.syncs
	w.stage.mu.Unlock()
	return s
}

// Close seals the last chunk, writes the drops block, the footer (index,
// statistics) and the trailer, syncs (unless SyncNone) and closes the
// file if Create opened it. After a write error it writes nothing more
// and returns the error; the file then lacks a footer and is read by
// linear scan or repaired by Recover.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	err := w.flushLocked(false)
	w.closed = true
	close(w.work)
	close(w.ordered)
	w.mu.Unlock()
	defer w.inline.close()
	if w.stopTick != nil {
		close(w.stopTick)
		<-w.tickDone
	}
	w.wg.Wait()
	if err == nil {
		err = w.stage.error()
	}
	if err == nil {
		err = w.writeFooter()
	}
	if err == nil && w.opts.Sync != SyncNone {
		err = w.stage.sync()
	}
	if w.owned != nil {
		if cerr := w.owned.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("logfmt: close %s: %w", w.name, cerr)
		}
	}
	return err
}

func (w *Writer) writeFooter() error {
	st := w.stage
	f := &footer{chunks: st.index}
	for _, cs := range w.chans[1:] {
		f.channels = append(f.channels, cs.c)
		s := ChannelStats{Channel: cs.c.ID}
		if in := st.chans[cs.c.ID]; in != nil {
			s = *in
		}
		s.Drops = w.drops[cs.c.ID]
		f.stats = append(f.stats, s)
	}
	f.writer = WriterStats{Records: w.records, Chunks: uint64(len(st.index)), RawBytes: w.rawBytes, BytesWritten: st.off, Drops: w.dropsSum}
	off := st.off
	buf := appendBlock(nil, kindFooter, appendFooterBody(nil, f))
	buf = appendTrailer(buf, off)
	if err := st.writeRaw(buf); err != nil {
		return fmt.Errorf("logfmt: write footer: %w", err)
	}
	return st.flush()
}
