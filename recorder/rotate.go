package recorder

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/logfmt"
)

// rotator owns the current log file and starts the next one when the split
// size or duration is reached; every file repeats the channel definitions so
// each one stands alone. The next file is opened by the first record after a
// rotation, so a split recording never ends with an empty file and a ring
// never deletes a file for an empty one.
type rotator struct {
	cfg   Config
	w     *logfmt.Writer    // nil between a rotation and the next record
	drops map[string]uint64 // drops counted while no file is open

	closing  sync.WaitGroup // finished files still writing their footer
	mu       sync.Mutex     // guards written and closeErr (closing goroutines)
	closeErr error
	n        int      // files opened
	files    []string // files kept, oldest first
	first    int64    // receive stamp (monotonic) of the current file's first record; 0 before it
	defs     []*logfmt.Channel
	ids      map[string]uint16
	written  int64 // bytes in closed files
}

func (o *rotator) split() bool { return o.cfg.SplitSize > 0 || o.cfg.SplitDuration > 0 }

// name is the i-th file: the output itself, or base_NNN.vrlog when splitting.
func (o *rotator) name(i int) string {
	if !o.split() {
		return o.cfg.Output
	}
	base := strings.TrimSuffix(o.cfg.Output, ".vrlog")
	return fmt.Sprintf("%s_%03d.vrlog", base, i)
}

func newRotator(cfg Config) (*rotator, error) {
	o := &rotator{cfg: cfg}
	if err := o.open(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *rotator) open() error {
	p := o.name(o.n)
	md := logMetadata(o.cfg)
	if o.split() {
		md["split_index"] = fmt.Sprint(o.n)
	}
	w, err := logfmt.Create(p, logfmt.WriterOptions{Metadata: md, FlushInterval: o.cfg.FlushInterval, Sync: o.cfg.Sync, Overwrite: o.cfg.Force,
		DirectIO: true}) // past the page cache: see logfmt.WriterOptions.DirectIO
	if err != nil {
		return err // logfmt names the file
	}
	o.w, o.first, o.ids = w, 0, map[string]uint16{}
	o.n++
	o.files = append(o.files, p)
	for _, d := range o.defs {
		if err := o.add(d); err != nil {
			return err
		}
	}
	for o.cfg.MaxFiles > 0 && len(o.files) > o.cfg.MaxFiles {
		// Unlinking a multi-GB file takes hundreds of milliseconds: off the
		// write path too (inline, it cost ~12 frames per rotation at 30 Hz).
		old := o.files[0]
		o.files = o.files[1:]
		o.closing.Add(1)
		go func() { defer o.closing.Done(); os.Remove(old) }()
	}
	return nil
}

// logMetadata is the header metadata of the logs a recording writes: the
// tool, the caller's metadata, the note, the host.
func logMetadata(cfg Config) map[string]string {
	md := map[string]string{"tool": "vrlog record"}
	for k, v := range cfg.Metadata {
		md[k] = v
	}
	if cfg.Note != "" {
		md["note"] = cfg.Note
	}
	if h, err := os.Hostname(); err == nil {
		md[hostclock.MetaHost] = h
	}
	if cfg.recording != "" {
		md[hostclock.MetaRecording] = cfg.recording // one id for every file of the recording
	}
	return md
}

func (o *rotator) add(d *logfmt.Channel) error {
	id, err := o.w.AddChannel(*d)
	if err != nil {
		return fmt.Errorf("%s: channel %s: %w", o.files[len(o.files)-1], d.Name, err)
	}
	o.ids[d.Name] = id
	return nil
}

func (o *rotator) addChannel(d *logfmt.Channel) error {
	o.defs = append(o.defs, d)
	if o.w == nil {
		return nil // added when the next file opens
	}
	return o.add(d)
}

// ensure opens the next file after a rotation, and rotates first when a
// record received at monoNs (0: not a record) would make the current file
// span the split duration: a file holds the records received within
// SplitDuration of its first one (measured per record; a tick, once a
// second, let a 2 s file grow to 3 s).
func (o *rotator) ensure(monoNs int64) error {
	if o.w != nil && o.cfg.SplitDuration > 0 && monoNs != 0 {
		switch {
		case o.first == 0:
			o.first = monoNs
		case monoNs-o.first >= o.cfg.SplitDuration.Nanoseconds():
			if err := o.rotate(); err != nil {
				return err
			}
		}
	}
	if o.w != nil {
		return nil
	}
	if err := o.open(); err != nil {
		return err
	}
	o.first = monoNs
	for name, n := range o.drops {
		o.w.AddDrops(o.ids[name], n)
	}
	o.drops = nil
	return nil
}

// id is the channel's id in the current file (call after ensure).
func (o *rotator) id(name string) uint16 { return o.ids[name] }

func (o *rotator) addDrops(name string, n uint64, _ int64) {
	if o.w == nil {
		if o.drops == nil {
			o.drops = map[string]uint64{}
		}
		o.drops[name] += n
		return
	}
	o.w.AddDrops(o.ids[name], n)
}

// write appends r; with a non-nil release the writer may keep r.Payload
// until it is on disk (logfmt.Writer.WriteOwned) and calls release then.
func (o *rotator) write(r *logfmt.Record, release func()) error {
	if err := o.w.WriteOwned(r, release); err != nil {
		return err // logfmt names the file
	}
	if o.cfg.SplitSize > 0 && o.w.Stats().BytesWritten >= o.cfg.SplitSize {
		return o.rotate()
	}
	return nil
}

// seal starts a new chunk in the current file; ahead, the open one is
// written ahead of chunks still being compressed (small records).
func (o *rotator) seal(ahead bool) error {
	switch {
	case o.w == nil:
		return nil
	case ahead:
		return o.w.SealAhead() // logfmt names the file
	}
	return o.w.Seal()
}

func (o *rotator) busy() bool { return o.w != nil && o.w.WouldBlock() }

// tick: files are split by the records' receive stamps (ensure).
func (o *rotator) tick() error { return nil }

// rotate finishes the current file off the write path: its last chunks,
// footer and fsync can take seconds on a multi-GB file, and the records
// arriving meanwhile must not wait for them (they did, and were dropped).
func (o *rotator) rotate() error {
	w, name := o.w, o.files[len(o.files)-1]
	o.w = nil
	counted := w.Stats().BytesWritten // counted now, so the total never dips
	o.mu.Lock()
	o.written += counted
	o.mu.Unlock()
	o.closing.Add(1)
	go func() {
		defer o.closing.Done()
		err := o.finish(w, name, counted)
		o.mu.Lock()
		if o.closeErr == nil {
			o.closeErr = err
		}
		o.mu.Unlock()
	}()
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closeErr // an earlier file that failed to close stops the recording
}

// finish closes w and counts its bytes beyond the counted ones.
func (o *rotator) finish(w *logfmt.Writer, name string, counted int64) error {
	err := w.Close()
	o.mu.Lock()
	o.written += w.Stats().BytesWritten - counted
	o.mu.Unlock()
	if err != nil {
		return fmt.Errorf("close %s: %w", name, err)
	}
	return nil
}

func (o *rotator) closeCurrent() error { return o.finish(o.w, o.files[len(o.files)-1], 0) }

// close finishes the current file and waits for those still closing.
func (o *rotator) close() error {
	var err error
	if o.w != nil {
		err = o.closeCurrent()
		o.w = nil
	}
	o.closing.Wait()
	if err == nil {
		err = o.closeErr
	}
	return err
}

// bytes is what has been written so far, all files.
func (o *rotator) bytes() (written int64, raw uint64) {
	o.mu.Lock()
	written = o.written
	o.mu.Unlock()
	if o.w == nil {
		return written, 0
	}
	st := o.w.Stats()
	return written + st.BytesWritten, st.RawBytes
}

// paths are the files written so far, the current one included.
func (o *rotator) paths() []string { return append([]string(nil), o.files...) }

// abandon removes the first file when recording never started (a
// device or FIFO written in place is left alone).
func (o *rotator) abandon() {
	if o.n == 1 {
		o.w.Remove()
		return
	}
	o.w.Close()
}
