// Package outfile writes every file a vrlog verb produces (logs, MCAP, CSV,
// HTML, JUnit, JSON) and its standard output the same way, so an output is
// complete or absent:
//
//   - a file is written to a temporary name next to its path (.NAME.tmp-*),
//     created with mode 0666 &^ umask like any file a shell creates;
//   - Commit flushes, fsyncs and closes it, renames it over the path and
//     fsyncs the directory; every error of write, flush, fsync, close and
//     rename is returned, naming the path once;
//   - Abort, or Discard when the process is interrupted, removes it (and a
//     directory the output created), so nothing half-written is left;
//   - standard output is buffered, its first write error kept, and it is
//     flushed and fsynced (when it is a file) at the end (Stream);
//   - a log read while it is written (sim --log) is written in place with
//     the same mode and the same checks (Live).
package outfile

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Options configure Create.
type Options struct {
	// Force replaces an existing file; without it Create fails with an
	// error wrapping fs.ErrExist.
	Force bool
}

// File is one output file being written.
type File struct {
	path, tmp string
	f         *os.File
	w         *bufio.Writer
	err       error // first failure; every later call returns it
	closed    bool  // flushed, synced and closed (Finish)
	done      bool  // committed or aborted
}

// bufSize is the write buffer; larger writes go straight to the file.
const bufSize = 1 << 20

// Create starts writing path. It refuses a directory, and an existing
// file unless o.Force (fs.ErrExist).
func Create(path string, o Options) (*File, error) {
	if path == "" || path == "-" {
		return nil, errors.New("output: give a file path")
	}
	if err := check(path, o.Force); err != nil {
		return nil, err
	}
	// Created and registered under the lock: an interrupt removes it
	// either way, never between the two.
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.discarded {
		return nil, fmt.Errorf("create %s: interrupted", path)
	}
	f, tmp, err := createTemp(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	out := &File{path: path, tmp: tmp, f: f, w: bufio.NewWriterSize(f, bufSize)}
	live.files[out] = true
	return out, nil
}

// check refuses what Create must not replace.
func check(path string, force bool) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return nil
	case st.IsDir():
		return fmt.Errorf("%s: is a directory", path)
	case !force:
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	return nil
}

// createTemp creates a fresh hidden file next to the output with mode
// 0666, which the umask narrows (os.CreateTemp would force 0600).
func createTemp(dir, base string) (*os.File, string, error) {
	for {
		var b [6]byte
		rand.Read(b[:])
		name := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(b[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
}

// unwrapPath drops a PathError's own path: the caller names the output.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Path is the final path; TempName where the bytes are until Commit (to
// read the output back before committing it).
func (f *File) Path() string     { return f.path }
func (f *File) TempName() string { return f.tmp }

// Write buffers p; the first error sticks.
func (f *File) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.closed {
		return 0, f.fail(errors.New("write after Finish"))
	}
	n, err := f.w.Write(p)
	if err != nil {
		return n, f.fail(unwrapPath(err))
	}
	return n, nil
}

// fail records the first error, naming the output.
func (f *File) fail(err error) error {
	if f.err == nil {
		f.err = fmt.Errorf("write %s: %w", f.path, err)
	}
	return f.err
}

// Sync flushes the buffer and fsyncs the file (a logfmt writer's sync
// policy calls it).
func (f *File) Sync() error {
	if f.err != nil {
		return f.err
	}
	if err := f.w.Flush(); err != nil {
		return f.fail(unwrapPath(err))
	}
	if err := f.f.Sync(); err != nil {
		return f.fail(unwrapPath(err))
	}
	return nil
}

// Finish flushes, fsyncs and closes the file without renaming it: the
// caller may read TempName back before Commit. Idempotent.
func (f *File) Finish() error {
	if f.closed || f.err != nil {
		return f.err
	}
	err := f.Sync()
	if cerr := f.f.Close(); err == nil && cerr != nil {
		err = f.fail(unwrapPath(cerr))
	}
	f.closed = true
	return err
}

// Commit finishes the file and renames it over its path. On any error the
// temporary file is removed and nothing is written.
func (f *File) Commit() error {
	if f.done {
		return f.err
	}
	err := f.Finish()
	if err == nil {
		err = live.rename(f)
	}
	if err != nil {
		f.Abort()
		return err
	}
	syncDir(filepath.Dir(f.path))
	return nil
}

// Abort removes the temporary file. It does nothing after Commit, so it
// may be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	if !f.closed {
		f.f.Close()
		f.closed = true
	}
	live.remove(f)
}

// syncDir makes a rename durable. Its failure is not the output's: the
// file itself is complete and synced.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// ---- the process's live outputs, for Discard ----

// live is every output not yet committed or aborted, process-wide because
// a signal is: Discard removes them on the way out.
var live = &registry{files: map[*File]bool{}, extra: map[string]bool{}, dirs: map[string]bool{}}

type registry struct {
	mu        sync.Mutex
	files     map[*File]bool
	extra     map[string]bool // temporary files other code writes (Track)
	dirs      map[string]bool // directories Dir created and would remove
	discarded bool            // Discard ran: no more commits
}

// rename commits f under the lock, so that Discard sees it either before
// (and removes the temporary file) or after (and leaves the output).
func (r *registry) rename(f *File) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.discarded || !r.files[f] {
		return fmt.Errorf("write %s: interrupted", f.path)
	}
	delete(r.files, f)
	f.done = true
	if err := os.Rename(f.tmp, f.path); err != nil {
		os.Remove(f.tmp)
		f.err = fmt.Errorf("write %s: %w", f.path, unwrapLink(err))
		return f.err
	}
	return nil
}

func (r *registry) remove(f *File) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.files, f)
	f.done = true
	os.Remove(f.tmp)
}

func unwrapLink(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// Track adds a temporary file that other code writes (and renames away
// when it succeeds) to what Discard removes. The returned func forgets it,
// removing it if it is still there.
func Track(path string) (forget func()) {
	live.mu.Lock()
	if live.discarded {
		os.Remove(path)
	}
	live.extra[path] = true
	live.mu.Unlock()
	return func() {
		live.mu.Lock()
		delete(live.extra, path)
		live.mu.Unlock()
		os.Remove(path)
	}
}

// Discard removes every output not yet committed and the directories
// their Dirs created, and makes any later Commit fail: for the process's
// way out when it is interrupted. It returns how many files it removed.
func Discard() int {
	live.mu.Lock()
	defer live.mu.Unlock()
	live.discarded = true
	n := 0
	for f := range live.files {
		os.Remove(f.tmp)
		delete(live.files, f)
		n++
	}
	for p := range live.extra {
		if os.Remove(p) == nil {
			n++
		}
		delete(live.extra, p)
	}
	for d := range live.dirs {
		os.Remove(d) // only if empty: what Dir created and filled with nothing else
		delete(live.dirs, d)
	}
	return n
}

// Live is a file written in place as it grows, for a log that is read
// while it is written (sim --log, as record's log): created with 0666 &^
// umask, small buffered writes, the first error kept; Close flushes,
// fsyncs and closes it and returns that error. An interrupt leaves it as
// far as it got, like a recording.
type Live struct {
	path string
	f    *os.File
	w    *bufio.Writer
	err  error
}

// CreateLive creates (or truncates) path.
func CreateLive(path string) (*Live, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	return &Live{path: path, f: f, w: bufio.NewWriterSize(f, 4<<10)}, nil
}

// Write appends p; after an error every Write returns it.
func (l *Live) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.w.Write(p)
	if err != nil {
		l.err = fmt.Errorf("write %s: %w", l.path, unwrapPath(err))
	}
	return n, l.err
}

// Close flushes, fsyncs and closes the file; the result is the first
// error since CreateLive.
func (l *Live) Close() error {
	if l.f == nil {
		return l.err
	}
	for _, step := range []func() error{l.w.Flush, l.f.Sync} {
		if err := step(); err != nil && l.err == nil {
			l.err = fmt.Errorf("write %s: %w", l.path, unwrapPath(err))
		}
	}
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = fmt.Errorf("write %s: %w", l.path, unwrapPath(err))
	}
	l.f = nil
	return l.err
}
