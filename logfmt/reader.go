package logfmt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/vrlog/vrlog/outfile"
)

// ReaderOptions bounds what a reader will allocate and says how to treat
// damage. The zero value gives the defaults.
type ReaderOptions struct {
	// Tolerant skips corrupt chunks (reporting them in SkippedChunks)
	// instead of failing.
	Tolerant bool
	// MaxRecordSize bounds one record's header+payload; default 256 MiB.
	MaxRecordSize int64
	// MaxChunkSize bounds a chunk's meta section, its data section and
	// any decompressed block; default 1 GiB.
	MaxChunkSize int64
	// MaxChannels bounds the channel table; default 65535.
	MaxChannels int
	// MaxIndexSize bounds the footer (chunk index and statistics);
	// default 256 MiB.
	MaxIndexSize int64
	// MaxMergeChunks bounds how many chunks with overlapping time ranges
	// are loaded together to merge their records by time; default 64.
	// Longer runs of overlapping chunks are merged in groups of this
	// size, so their records may come out of time order.
	MaxMergeChunks int
	// IgnoreIndex reads the file by linear scan even if it has a footer.
	IgnoreIndex bool
	// Map has Open map the file into memory, read only (Linux; elsewhere
	// it is read as without it): a record's header and payload in a
	// raw-stored payload block are then views of the map, not copies,
	// valid until Close rather than until the next record, and must not
	// be written to. Everything is checked as without it (the block's
	// CRC-32C is computed over the mapped bytes). A file that shrinks
	// while it is mapped makes a later access to the lost pages fault
	// (SIGBUS), so map only a log no one truncates: a closed file.
	Map bool
	// Name is used in errors; Open sets it to the path.
	Name string
}

func (o ReaderOptions) withDefaults() ReaderOptions {
	if o.MaxRecordSize <= 0 {
		o.MaxRecordSize = 256 << 20
	}
	if o.MaxChunkSize <= 0 {
		o.MaxChunkSize = 1 << 30
	}
	o.MaxChunkSize = min(o.MaxChunkSize, maxSection)
	if o.MaxChannels <= 0 || o.MaxChannels > 0xFFFF {
		o.MaxChannels = 0xFFFF
	}
	if o.MaxIndexSize <= 0 {
		o.MaxIndexSize = 256 << 20
	}
	o.MaxIndexSize = min(o.MaxIndexSize, maxSection)
	if o.MaxMergeChunks <= 0 {
		o.MaxMergeChunks = 64
	}
	o.MaxMergeChunks = min(o.MaxMergeChunks, 0xFFFF)
	return o
}

// Reader reads a log. Its methods are safe for concurrent use; each
// Iterator is used by one goroutine.
type Reader struct {
	chunkLoader
	file *os.File

	header    Header
	channels  []Channel
	chunks    []ChunkInfo // file order
	order     []int       // chunk indices by (MinMonoNs, Offset)
	prefixMax []int64     // running max of MaxMonoNs along order
	stats     []ChannelStats
	indexed   bool
	noFooter  bool // no footer block at all: the writer never closed the log
	tornTail  *CorruptionError
	writer    *WriterStats

	warnings []*CorruptionError
	live     string // "being written by PID n (record)": a writer holds it (Open)

	mu      sync.Mutex
	skipped []*CorruptionError
	closed  atomic.Bool
}

// Open opens the log at path: from the footer in a constant number of
// reads, or by a linear scan of block headers and chunk meta sections
// when the footer is missing (Indexed reports which).
//
// path must name a regular file (ErrNotRegular otherwise).
func Open(path string, opts ReaderOptions) (*Reader, error) {
	f, size, err := openLogFile(path)
	if err != nil {
		return nil, err
	}
	opts.Name = path
	r, err := NewReader(f, size, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	r.live = outfile.Describe(f)
	if opts.Map {
		// After NewReader: the map holds the bytes NewReader checked
		// the size of; a failed map reads as without it.
		r.mapped, _ = mapFile(f, size)
	}
	return r, nil
}

// BeingWritten says that another process holds the file as a live log
// (a recorder writing it): "being written by PID 123 (record)", or "". Such
// a log has no footer yet and its end may be cut mid-block: Open read
// what was there when it opened (a linear scan), which is no damage.
func (r *Reader) BeingWritten() string { return r.live }

// NewReader reads a log of size bytes from ra. Close does not close ra.
func NewReader(ra io.ReaderAt, size int64, opts ReaderOptions) (*Reader, error) {
	o := opts.withDefaults()
	if o.Name == "" {
		o.Name = "log"
	}
	r := &Reader{chunkLoader: chunkLoader{ra: ra, size: size, opts: o}}
	major, minor, warning, err := checkStart(&r.chunkLoader)
	if err != nil {
		return nil, err
	}
	if warning != nil {
		r.warnings = append(r.warnings, warning)
	}
	r.header.VersionMajor, r.header.VersionMinor = major, minor
	var indexErr *CorruptionError
	footerAt := size
	if !o.IgnoreIndex {
		ok, foff, err := r.openIndexed()
		if ok {
			r.finish()
			return r, nil
		}
		// A damaged footer is read around like a missing one: by a scan.
		indexErr, footerAt = asCorruption(err, o.Name), foff
	}
	res, err := scan(&r.chunkLoader, preludeSize, o.Tolerant)
	if err != nil {
		return nil, err
	}
	r.noFooter = indexErr == nil && res.footer == nil
	if indexErr != nil && !warnedFrom(res.warnings, footerAt) {
		r.warnings = append(r.warnings, indexErr) // a CRC-valid footer that fails its checks
	}
	if res.headerOff < 0 && !o.Tolerant && len(res.blockSpans) > 0 && !res.headerDamaged {
		return nil, corrupt(o.Name, preludeSize, "header block", "a header block after the prelude", ErrMalformed)
	}
	if len(res.blockSpans) == 0 && res.tornTail == nil && len(res.problems) == 0 && len(res.warnings) == 0 {
		// Only the prelude: the writer died before its first write completed.
		res.tornTail = corrupt(o.Name, preludeSize, "header block", "a header block after the prelude", ErrTornTail)
	}
	r.fromScan(res)
	r.finish()
	return r, nil
}

// warnedFrom reports whether a warning lies at or after off.
func warnedFrom(ws []*CorruptionError, off int64) bool {
	for _, w := range ws {
		if w.Offset >= off {
			return true
		}
	}
	return false
}

func asCorruption(err error, name string) *CorruptionError {
	if err == nil {
		return nil
	}
	var ce *CorruptionError
	if errors.As(err, &ce) {
		return ce
	}
	return corrupt(name, -1, "file", "", err)
}

// openIndexed reads the trailer, the footer and the header block. With
// ok=false the caller scans instead: err is nil when there is no footer,
// else the damage found in it, at or after the footer offset foff. A
// damaged header block alone does not stop an indexed open: it is a
// warning, and Header is then lostHeader's stand-in.
func (r *Reader) openIndexed() (ok bool, foff int64, err error) {
	o := &r.opts
	foff = r.size
	if r.size < preludeSize+trailerSize+2*blockHeaderSize {
		return false, foff, nil
	}
	var t [trailerSize]byte
	if _, err := r.ReadAt(t[:], r.size-trailerSize); err != nil {
		return false, foff, fmt.Errorf("%s: read trailer: %w", o.Name, err)
	}
	foff, ok = parseTrailer(t[:])
	if !ok {
		return false, r.size, nil
	}
	h, body, cerr := readBlockAt(&r.chunkLoader, r.size-trailerSize, foff, nil)
	if cerr == nil && (h.kind != kindFooter || foff < preludeSize || foff+h.size() != r.size-trailerSize) {
		cerr = corrupt(o.Name, foff, "footer block", "a footer block ending at the trailer", ErrMalformed)
	}
	if cerr != nil {
		return false, foff, cerr
	}
	f, ok := parseFooterBody(body, o.MaxChannels)
	if !ok {
		return false, foff, corrupt(o.Name, foff, "footer block", "", ErrMalformed)
	}
	if err := checkFooter(f, foff); err != nil {
		return false, foff, corrupt(o.Name, foff, "footer block", "", err)
	}
	hh, hbody, cerr := readBlockAt(&r.chunkLoader, foff, preludeSize, nil)
	hd, ok := parseHeaderBody(hbody)
	if cerr == nil && (hh.kind != kindHeader || !ok) {
		cerr = corrupt(o.Name, preludeSize, "header block", "a header block after the prelude", ErrMalformed)
	}
	if cerr != nil {
		r.warnings = append(r.warnings, cerr)
		hd = lostHeader(f.chunks)
	}
	hd.VersionMajor, hd.VersionMinor = r.header.VersionMajor, r.header.VersionMinor
	r.header = hd
	r.channels = f.channels
	r.chunks = f.chunks
	r.stats = f.stats
	r.writer = &f.writer
	r.indexed = true
	return true, foff, nil
}

// checkFooter checks the index for consistency before it is trusted:
// chunks in file order, inside [prelude, footer), channels unique.
func checkFooter(f *footer, foff int64) error {
	ids := map[uint16]bool{}
	for _, c := range f.channels {
		if c.ID == 0 || ids[c.ID] {
			return fmt.Errorf("%w: channel id %d", ErrMalformed, c.ID)
		}
		ids[c.ID] = true
	}
	prev := int64(preludeSize)
	for i := range f.chunks {
		c := &f.chunks[i]
		if c.Offset < prev || c.Offset+c.Size() > foff {
			return fmt.Errorf("%w: chunk %d at offset %d", ErrMalformed, i, c.Offset)
		}
		prev = c.Offset + c.Size()
		for _, cc := range c.Channels {
			if !ids[cc.Channel] {
				return fmt.Errorf("%w: chunk %d references undefined channel %d", ErrMalformed, i, cc.Channel)
			}
		}
	}
	if len(f.stats) != len(f.channels) {
		return fmt.Errorf("%w: %d stats for %d channels", ErrMalformed, len(f.stats), len(f.channels))
	}
	for i := range f.stats {
		if f.stats[i].Channel != f.channels[i].ID {
			return fmt.Errorf("%w: stats %d", ErrMalformed, i)
		}
	}
	return nil
}

func (r *Reader) fromScan(res *scanResult) {
	major, minor := r.header.VersionMajor, r.header.VersionMinor
	r.header = res.header
	if res.headerOff < 0 {
		r.header = lostHeader(res.chunks)
	}
	r.header.VersionMajor, r.header.VersionMinor = major, minor
	r.chunks = res.chunks
	r.tornTail = res.tornTail
	r.warnings = append(r.warnings, res.warnings...)
	for _, p := range res.problems {
		r.skip(p)
	}
	r.channels, r.stats = res.index()
}

// finish builds the time order of chunks for seeking.
func (r *Reader) finish() {
	r.order = make([]int, len(r.chunks))
	for i := range r.order {
		r.order[i] = i
	}
	sort.SliceStable(r.order, func(a, b int) bool {
		return r.chunks[r.order[a]].MinMonoNs < r.chunks[r.order[b]].MinMonoNs
	})
	r.prefixMax = make([]int64, len(r.order))
	for i, ci := range r.order {
		m := r.chunks[ci].MaxMonoNs
		if i > 0 && r.prefixMax[i-1] > m {
			m = r.prefixMax[i-1]
		}
		r.prefixMax[i] = m
	}
}

// skip books the damage ce, once: a chunk met again (another pass, a
// loop of replay) is the same damage.
func (r *Reader) skip(ce *CorruptionError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.skipped {
		if s.Offset == ce.Offset && s.Error() == ce.Error() {
			return
		}
	}
	r.skipped = append(r.skipped, ce)
}

// Header returns the file header.
func (r *Reader) Header() Header { return r.header }

// Channels returns the channel definitions sorted by id.
func (r *Reader) Channels() []Channel { return r.channels }

// Chunks returns the chunk index in file order.
func (r *Reader) Chunks() []ChunkInfo { return r.chunks }

// Stats returns per-channel statistics, in Channels order.
func (r *Reader) Stats() []ChannelStats { return r.stats }

// WriterStats returns the writer's counters from the footer, or nil when
// the file was read by linear scan.
func (r *Reader) WriterStats() *WriterStats { return r.writer }

// Indexed reports whether the reader opened from the footer (true) or
// fell back to a linear scan (false).
func (r *Reader) Indexed() bool { return r.indexed }

// Finished reports whether the log ends with its footer: the writer
// closed it. A log without one (a recorder killed at a chunk boundary, or
// one still writing it) is read by a linear scan and is not intact
// (Damage.Intact), though no byte of it need be damaged.
func (r *Reader) Finished() bool { return !r.noFooter }

// TornTail returns the torn tail found by a linear scan (the file ends
// mid-block and nothing valid follows), or nil. A torn tail is not an
// error: everything before it is readable.
func (r *Reader) TornTail() *CorruptionError { return r.tornTail }

// SkippedChunks returns the damage skipped in tolerant mode: chunks (and
// other blocks) that could not be read.
func (r *Reader) SkippedChunks() []*CorruptionError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*CorruptionError(nil), r.skipped...)
}

// Warnings returns damage that Open read around without losing a record,
// in strict mode too: a damaged prelude (the log was read as the
// reader's version, 1.1), a damaged header block (Header then has no metadata and the
// earliest receive time as its creation time), a damaged footer index or
// trailer (the log was read by a linear scan instead, as one without a
// footer). Nil for a sound file.
func (r *Reader) Warnings() []*CorruptionError { return r.warnings }

// BytesRead returns the bytes read from the file so far.
func (r *Reader) BytesRead() int64 { return r.bytesRead.Load() }

// Mapped reports whether b lies in the reader's map of the file
// (ReaderOptions.Map): such a record header or payload stays valid and
// unchanged until Close. A payload decompressed from a zstd block never
// does; it is valid until the next record.
func (r *Reader) Mapped(b []byte) bool {
	m := r.mapped
	if len(m) == 0 || len(b) == 0 {
		return false
	}
	lo, p := uintptr(unsafe.Pointer(unsafe.SliceData(m))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p-lo <= uintptr(len(m)-len(b))
}

// Size returns the file size.
func (r *Reader) Size() int64 { return r.size }

// Close releases the decoder and closes the file if Open opened it.
func (r *Reader) Close() error {
	if r.closed.Swap(true) {
		return ErrClosed
	}
	r.chunkLoader.close()
	if r.mapped != nil {
		unmapFile(r.mapped)
		r.mapped = nil
	}
	if r.file != nil {
		return r.file.Close()
	}
	return nil
}
