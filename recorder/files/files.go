// Package files is a recorder's output as log files: the current file,
// the next one when the split size or duration is reached or a split is
// asked for, a ring of the newest N, and the recording started and stopped
// on request (the control plane) with the process staying up.
//
// Every file repeats the channel definitions in the order Define named
// them, so each file stands alone and a channel's number in the stream is
// its id in every file. The next file is opened by the first record after
// a rotation or split, so a split recording never ends with an empty file
// and a ring never deletes a file for an empty one. Files are finished
// (last chunks, footer, fsync: seconds on a multi-GB file) off the writer
// stage, which goes on with the next file meanwhile.
package files

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
	"github.com/vrlog/vrlog/recorder/output"
)

// Options says where the files go and when a new one starts.
type Options struct {
	// Path is the first recording's file, and the name the others are
	// made from; its directory is the only one the control plane's file
	// names reach (Start).
	Path  string
	Force bool // Path may replace an existing file
	// SplitSize (bytes) or SplitDuration (receive time) start the next
	// file, BASE_NNN.vrlog from BASE_000; MaxFiles > 0 keeps only the
	// newest files (a ring).
	SplitSize     int64
	SplitDuration time.Duration
	MaxFiles      int
	FlushInterval time.Duration
	Sync          logfmt.SyncPolicy
	// Metadata is every file's header metadata (tool, note, host); the
	// recording's id and the split index are added per file.
	Metadata map[string]string
	// Idle opens nothing until Start.
	Idle bool
}

// Finished is a file the output has finished, or failed to (Err).
type Finished struct {
	Path    string
	Bytes   int64  // its size
	Records uint64 // its records
	Err     error
}

// Errors of the control requests; each leaves the output as it was.
var (
	// ErrState: the request does not apply in the output's state (stop
	// while idle, start while recording).
	ErrState = errors.New("files: not in that state")
	// ErrName: a file name that is not one plain name in the output's
	// directory (a slash, .., a hidden name, an unknown {field}).
	ErrName = errors.New("files: not a file name")
	// ErrExists: the file asked for exists.
	ErrExists = errors.New("files: the file exists")
)

// Output is the recording's output as files. The writer stage calls
// every method but Progress and Finished, which any goroutine may call.
type Output struct {
	opts Options
	dir  string
	defs []*logfmt.Channel

	w        *logfmt.Writer    // nil when idle and between a rotation and the next record
	started  bool              // recording (else idle): a file is open or opens at the next record
	path     string            // this recording's first file, as given (a device or FIFO too)
	base     string            // and the base of its numbered files: BASE_NNN.vrlog
	numbered bool              // every file of it is BASE_NNN.vrlog (SplitSize, SplitDuration)
	n        int               // files of this recording opened
	note     string            // this recording's note, if its start gave one
	id       string            // this recording's id (hostclock.MetaRecording)
	first    int64             // receive stamp (monotonic) of the current file's first record; 0 before it
	drops    map[uint16]uint64 // drops counted while no file is open
	starts   int               // recordings started (names: BASE-N)
	cur      string            // the current file's path ("" when none is open)

	closing  sync.WaitGroup // finished files still writing their footer
	mu       sync.Mutex     // guards what follows (closing goroutines, Progress)
	closeErr error
	ring     []string   // files kept by the ring, oldest first
	files    []string   // every file written, the current one last
	done     []Finished // the files finished, in order (Finished)
	written  int64      // bytes in closed files
	curW     *logfmt.Writer
}

// New opens the first file (unless opts.Idle).
func New(opts Options) (*Output, error) {
	o := &Output{opts: opts, dir: filepath.Dir(opts.Path)}
	if opts.Idle {
		return o, nil
	}
	if _, err := o.Start("", ""); err != nil {
		return nil, err
	}
	return o, nil
}

// split reports whether every file is numbered by the split options.
func (o *Output) split() bool { return o.opts.SplitSize > 0 || o.opts.SplitDuration > 0 }

// Start starts a recording into name, a file name in the output's
// directory (.vrlog added if missing; {time} becomes the UTC time, {n}
// the recording's number), or, with name "", into Path for the first
// recording (or any later one while it does not exist) and BASE-N.vrlog
// after it; note, if given, is its files'
// note. The file opens now (or, after an error, not at all); it returns
// its path.
func (o *Output) Start(name, note string) (string, error) {
	if o.started {
		return "", fmt.Errorf("%w: recording into %s already", ErrState, o.cur)
	}
	path, err := o.pathFor(name)
	if err != nil {
		return "", err
	}
	o.starts++
	o.path, o.base, o.numbered, o.n, o.note, o.id = path, strings.TrimSuffix(path, ".vrlog"), o.split(), 0, note, newID()
	if err := o.open(); err != nil {
		o.starts--
		return "", err
	}
	o.started = true
	return o.cur, nil
}

// pathFor is the file a Start with name writes.
func (o *Output) pathFor(name string) (string, error) {
	if name == "" {
		if o.starts == 0 || outfile.InPlace(o.opts.Path) { // a device or FIFO takes every recording in place
			return o.opts.Path, nil
		}
		if _, err := os.Lstat(o.opts.Path); errors.Is(err, os.ErrNotExist) {
			return o.opts.Path, nil // the -o file, while a recording started by name left it free
		}
		base := strings.TrimSuffix(o.opts.Path, ".vrlog")
		for n := o.starts + 1; ; n++ {
			p := fmt.Sprintf("%s-%d.vrlog", base, n)
			if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
				return p, nil
			}
		}
	}
	name, err := expand(name, o.starts+1, time.Now())
	if err != nil {
		return "", err
	}
	p := filepath.Join(o.dir, name)
	if _, err := os.Lstat(p); err == nil {
		return "", fmt.Errorf("%w: %s", ErrExists, p)
	}
	return p, nil
}

// expand checks that name is one plain file name and fills in its fields.
func expand(name string, n int, now time.Time) (string, error) {
	bad := func(why string) (string, error) { return "", fmt.Errorf("%w: %q %s", ErrName, name, why) }
	switch {
	case len(name) > 200:
		return bad("is longer than 200 bytes")
	case strings.ContainsAny(name, "/\\\x00"):
		return bad("holds a path separator or NUL: give a name in the recorder's directory")
	case name == "." || name == ".." || strings.HasPrefix(name, "."):
		return bad("is . or .., or hidden")
	}
	var b strings.Builder
	for rest := name; rest != ""; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return bad("has a { without }")
		}
		switch field := rest[i+1 : i+j]; field {
		case "time":
			b.WriteString(now.UTC().Format("20060102T150405Z"))
		case "n":
			fmt.Fprint(&b, n)
		default:
			return bad(fmt.Sprintf("has an unknown field {%s} (known: {time}, {n})", field))
		}
		rest = rest[i+j+1:]
	}
	out := b.String()
	if out == "" || out == ".vrlog" {
		return bad("is empty")
	}
	if strings.ContainsAny(out, "{}") {
		return bad("has a { or } that is not a field")
	}
	if !strings.HasSuffix(out, ".vrlog") {
		out += ".vrlog"
	}
	return out, nil
}

// Stop finishes the recording's current file and goes idle; the file is
// finished off the writer stage: done tells when.
func (o *Output) Stop() (done <-chan Finished, err error) {
	if !o.started {
		return nil, fmt.Errorf("%w: idle: no recording to stop", ErrState)
	}
	o.started = false
	return o.finishCurrent(), nil
}

// Split finishes the current file and goes on in the next one, opened by
// the next record: no record is left out or written twice across the
// seam. It returns the next file's name and when the finished one is done.
func (o *Output) Split() (next string, done <-chan Finished, err error) {
	switch {
	case !o.started:
		return "", nil, fmt.Errorf("%w: idle: no recording to split", ErrState)
	case o.w == nil:
		return "", nil, fmt.Errorf("%w: nothing was written since the last file was finished", ErrState)
	}
	o.numbered = true // base_001 follows base.vrlog
	return o.name(o.n), o.finishCurrent(), nil
}

// finishCurrent closes the current file off the writer stage (done tells
// when); with none open (nothing written since a split), done holds a
// Finished with no Path at once.
func (o *Output) finishCurrent() <-chan Finished {
	ch := make(chan Finished, 1)
	if o.w == nil {
		ch <- Finished{}
		return ch
	}
	o.rotate(ch)
	return ch
}

// Recording reports whether a recording is on (a file is open or opens at
// the next record), and its current file.
func (o *Output) Recording() (bool, string) { return o.started, o.cur }

// name is the i-th file of the recording: its path as given (a device or
// FIFO too), or BASE_NNN.vrlog once numbered.
func (o *Output) name(i int) string {
	if !o.numbered {
		return o.path
	}
	return fmt.Sprintf("%s_%03d.vrlog", o.base, i)
}

func (o *Output) open() error {
	p := o.name(o.n)
	md := map[string]string{}
	for k, v := range o.opts.Metadata {
		md[k] = v
	}
	if o.note != "" {
		md["note"] = o.note
	}
	md[hostclock.MetaRecording] = o.id // one id for every file of the recording
	if o.numbered {
		md["split_index"] = fmt.Sprint(o.n)
	}
	force := o.opts.Force && p == o.opts.Path
	w, err := logfmt.Create(p, logfmt.WriterOptions{Metadata: md, FlushInterval: o.opts.FlushInterval, Sync: o.opts.Sync, Overwrite: force,
		DirectIO: true}) // past the page cache: see logfmt.WriterOptions.DirectIO
	if err != nil {
		return err // logfmt names the file
	}
	o.w, o.first, o.cur = w, 0, p
	o.n++
	for _, d := range o.defs {
		if err := o.add(d); err != nil {
			return err
		}
	}
	for ch, n := range o.drops {
		w.AddDrops(ch, n)
	}
	o.drops = nil
	o.mu.Lock()
	o.curW = w
	o.files = append(o.files, p)
	o.ring = append(o.ring, p)
	var old []string
	for o.opts.MaxFiles > 0 && len(o.ring) > o.opts.MaxFiles {
		old = append(old, o.ring[0])
		o.ring = o.ring[1:]
		o.done = dropDone(o.done, old[len(old)-1])
	}
	o.mu.Unlock()
	for _, p := range old {
		// Unlinking a multi-GB file takes hundreds of milliseconds: off the
		// write path too (inline, it cost ~12 frames per rotation at 30 Hz).
		o.closing.Add(1)
		go func() { defer o.closing.Done(); os.Remove(p) }()
	}
	return nil
}

// dropDone removes path from the finished files (the ring deleted it).
func dropDone(done []Finished, path string) []Finished {
	out := done[:0]
	for _, f := range done {
		if f.Path != path {
			out = append(out, f)
		}
	}
	return out
}

func (o *Output) add(d *logfmt.Channel) error {
	if _, err := o.w.AddChannel(*d); err != nil {
		return fmt.Errorf("%s: channel %s: %w", o.cur, d.Name, err)
	}
	return nil
}

// Define takes the next channel, into the current file if one is open; a
// channel that could not be opened (logfmt.MetaError) opens the next file
// of a recording at once, so that the failure is in a file.
func (o *Output) Define(d *logfmt.Channel) error {
	o.defs = append(o.defs, d)
	if o.w == nil && o.started && d.Meta[logfmt.MetaError] != "" {
		return o.open()
	}
	if o.w == nil {
		return nil // added when the next file opens
	}
	return o.add(d)
}

// ensure opens the next file after a rotation, and rotates first when a
// record received at monoNs would make the current file span the split
// duration: a file holds the records received within SplitDuration of its
// first one (measured per record; a tick, once a second, let a 2 s file
// grow to 3 s).
func (o *Output) ensure(monoNs int64) error {
	if o.w != nil && o.opts.SplitDuration > 0 {
		switch {
		case o.first == 0:
			o.first = monoNs
		case monoNs-o.first >= o.opts.SplitDuration.Nanoseconds():
			o.rotate(nil)
			if err := o.closeError(); err != nil {
				return err // an earlier file that failed to close stops the recording
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
	return nil
}

// Write writes a record; while idle it is handed back unwritten.
func (o *Output) Write(e output.Entry) error {
	if !o.started {
		if e.Release != nil {
			e.Release()
		}
		return nil
	}
	if err := o.ensure(e.Record.RecvMonoNs); err != nil {
		if e.Release != nil {
			e.Release()
		}
		return err
	}
	if err := o.w.WriteOwned(e.Record, e.Release); err != nil {
		return err // logfmt names the file
	}
	if o.opts.SplitSize > 0 && o.w.Stats().BytesWritten >= o.opts.SplitSize {
		o.rotate(nil)
		return o.closeError()
	}
	return nil
}

// Drops counts recorder drops in the current file, or the next one.
func (o *Output) Drops(ch uint16, n uint64, _ int64) {
	switch {
	case !o.started:
	case o.w == nil:
		if o.drops == nil {
			o.drops = map[uint16]uint64{}
		}
		o.drops[ch] += n
	default:
		o.w.AddDrops(ch, n)
	}
}

// Seal starts a new chunk in the current file; ahead, the open one is
// written ahead of chunks still being compressed (small records).
func (o *Output) Seal(ahead bool) error {
	switch {
	case o.w == nil:
		return nil
	case ahead:
		return o.w.SealAhead() // logfmt names the file
	}
	return o.w.Seal()
}

// Busy reports that a large record would wait for earlier chunks'
// compression.
func (o *Output) Busy() bool { return o.w != nil && o.w.WouldBlock() }

// Tick: files are split by the records' receive stamps (ensure); a file
// that failed to finish stops the recording.
func (o *Output) Tick(int64) error { return o.closeError() }

func (o *Output) closeError() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closeErr
}

// rotate finishes the current file off the write path: its last chunks,
// footer and fsync can take seconds on a multi-GB file, and the records
// arriving meanwhile must not wait for them (they did, and were dropped).
// done, if not nil, is told how it went.
func (o *Output) rotate(done chan<- Finished) {
	w, name := o.w, o.cur
	o.w, o.cur = nil, ""
	counted := w.Stats().BytesWritten // counted now, so the total never dips
	o.mu.Lock()
	o.written += counted
	o.curW = nil
	o.mu.Unlock()
	o.closing.Add(1)
	go func() {
		defer o.closing.Done()
		f := o.finish(w, name, counted)
		o.mu.Lock()
		if f.Err != nil && o.closeErr == nil && done == nil {
			o.closeErr = f.Err // a rotation's failure stops the recording; a request's is answered
		}
		o.mu.Unlock()
		if done != nil {
			done <- f
		}
	}()
}

// finish closes w and counts its bytes beyond the counted ones.
func (o *Output) finish(w *logfmt.Writer, name string, counted int64) Finished {
	err := w.Close()
	st := w.Stats()
	f := Finished{Path: name, Bytes: st.BytesWritten, Records: st.Records, Err: err}
	if err != nil {
		f.Err = fmt.Errorf("close %s: %w", name, err)
	}
	o.mu.Lock()
	o.written += st.BytesWritten - counted
	if f.Err == nil && o.kept(name) {
		o.done = append(o.done, f)
	}
	o.mu.Unlock()
	return f
}

// kept reports whether the ring still holds path (mu held).
func (o *Output) kept(path string) bool {
	for _, p := range o.ring {
		if p == path {
			return true
		}
	}
	return false
}

// Close finishes the current file and waits for those still closing.
func (o *Output) Close() error {
	var err error
	if o.w != nil {
		w := o.w
		o.w = nil
		err = o.finish(w, o.cur, 0).Err
		o.mu.Lock()
		o.curW = nil
		o.mu.Unlock()
	}
	o.started = false
	o.closing.Wait()
	if err == nil {
		err = o.closeError()
	}
	return err
}

// Progress is what has been written so far, all files.
func (o *Output) Progress() output.Progress {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := output.Progress{Files: append([]string(nil), o.files...), BytesWritten: o.written}
	if o.curW != nil {
		st := o.curW.Stats()
		p.BytesWritten += st.BytesWritten
		p.RawBytes, p.Records = st.RawBytes, st.Records
	}
	return p
}

// Finished lists the files finished so far (and still kept by the ring),
// oldest first: what a file server may serve.
func (o *Output) Finished() []Finished {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Finished(nil), o.done...)
}

// Abandon removes the first file when the recording never started (a
// device or FIFO written in place is left alone).
func (o *Output) Abandon() {
	if o.w == nil {
		return
	}
	if len(o.files) == 1 {
		o.w.Remove()
	} else {
		o.w.Close()
	}
	o.w = nil
}

// newID is a random id for one recording's files.
func newID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
