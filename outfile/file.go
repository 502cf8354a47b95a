package outfile

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Options configure Create, CreateDir and CreateLive.
type Options struct {
	// Force replaces an existing regular file (or writes onto an existing
	// block device); without it Create fails with an error wrapping
	// fs.ErrExist. A character device, FIFO or socket needs no Force.
	Force bool
	// Stdout is what the path "-" writes to (a verb's standard output);
	// nil refuses "-".
	Stdout io.Writer
}

// File is one output being written.
type File struct {
	path   string    // as given: errors name it
	target string    // path with links followed: where the commit goes
	tmp    string    // the temporary file; "" when written in place
	force  bool      // the commit may replace an existing file
	f      *os.File  // the temporary file, or the device or FIFO in place
	sink   io.Writer // what w writes to: f, a socket, standard output
	closer io.Closer // closed by Finish (nil for standard output)
	w      *bufio.Writer
	err    error // first failure; every later call returns it
	closed bool  // flushed, synced and closed (Finish)
	done   bool  // committed or aborted
}

// bufSize is the write buffer; larger writes go straight to the file.
const bufSize = 1 << 20

// Create starts writing path: a temporary file next to it (links
// followed) for a new or regular file, the file itself for a device, FIFO
// or socket, o.Stdout for "-". It refuses a directory, and an existing
// regular file unless o.Force (fs.ErrExist).
func Create(path string, o Options) (*File, error) {
	t, err := resolve(path, o)
	if err != nil {
		return nil, err
	}
	if t.kind != kindTemp {
		return openInPlace(t)
	}
	if err := ParentExists(t.target); err != nil {
		return nil, err
	}
	// Created and registered under the lock: an interrupt removes it
	// either way, never between the two.
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.discarded {
		return nil, fmt.Errorf("create %s: interrupted", path)
	}
	f, tmp, err := createTemp(t.target)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	out := &File{path: path, target: t.target, tmp: tmp, force: o.Force, f: f, sink: f, closer: f, w: bufio.NewWriterSize(f, bufSize)}
	live.files[out] = true
	return out, nil
}

// openInPlace opens an existing device, FIFO or socket, or standard
// output, for writing where it is.
func openInPlace(t target) (*File, error) {
	out := &File{path: t.path, target: t.target}
	if t.kind == kindStdout {
		out.sink = t.stdout
	} else {
		var err error
		if out.f, out.sink, out.closer, err = openNode(t); err != nil {
			return nil, err
		}
	}
	out.w = bufio.NewWriterSize(out.sink, 64<<10)
	return out, nil
}

// openNode opens an existing device or FIFO (f, nil for a socket), or
// connects to a socket: written where it is. No O_TRUNC, no O_CREAT: the
// node is written, never replaced. A FIFO's open waits for its reader, as
// a shell's redirection does.
func openNode(t target) (f *os.File, w io.Writer, c io.Closer, err error) {
	if t.kind == kindSocket {
		conn, err := dialSocket(t.target)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("create %s: %w", t.path, err)
		}
		return nil, conn, conn, nil
	}
	if f, err = os.OpenFile(t.target, os.O_WRONLY, 0); err != nil {
		return nil, nil, nil, fmt.Errorf("create %s: %w", t.path, unwrapPath(err))
	}
	return f, f, f, nil
}

// createTemp creates a fresh hidden file next to target with mode 0666,
// which the umask narrows (os.CreateTemp would force 0600).
func createTemp(target string) (*os.File, string, error) {
	dir, base := filepath.Split(target)
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

// Path is the path as given ("-" for standard output).
func (f *File) Path() string { return f.path }

// TempName is where the bytes are until Commit, to read the output back
// before committing it; "" for an output written in place, which cannot
// be read back.
func (f *File) TempName() string { return f.tmp }

// InPlace reports an output written where it is (a device, FIFO, socket
// or standard output): no temporary file, no rename, no read back.
func (f *File) InPlace() bool { return f.tmp == "" }

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

// WriteBuffers writes bufs in order, after what Write buffered: to a
// file with vectored writes (writev) straight from them, which for large
// buffers (an MCAP chunk's frames) saves their copy into the write
// buffer. The first error sticks, as Write's.
func (f *File) WriteBuffers(bufs [][]byte) (int64, error) {
	if err := f.flushed(); err != nil {
		return 0, err
	}
	var n int64
	var err error
	if f.f != nil && f.sink == io.Writer(f.f) {
		n, err = writev(f.f, bufs)
	} else {
		n, err = writeEach(f.sink, bufs)
	}
	if err != nil {
		return n, f.fail(unwrapPath(err))
	}
	return n, nil
}

// CopyRange writes n bytes of src from offset off, after what Write
// buffered: to a file the kernel copies them (copy_file_range, as cp
// does), else they are read and written. The first error sticks, as
// Write's.
func (f *File) CopyRange(src *os.File, off, n int64) (int64, error) {
	if err := f.flushed(); err != nil {
		return 0, err
	}
	if f.f != nil && f.sink == io.Writer(f.f) {
		written, done, err := copyRange(f.f, src, off, n)
		if err != nil {
			return written, f.fail(unwrapPath(err))
		}
		if done {
			return written, nil
		}
	}
	written, err := io.Copy(f.sink, io.NewSectionReader(src, off, n))
	if err == nil && written < n {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return written, f.fail(unwrapPath(err))
	}
	return written, nil
}

// flushed readies f for a write that bypasses its buffer: what Write
// buffered is written first.
func (f *File) flushed() error {
	if f.err != nil {
		return f.err
	}
	if f.closed {
		return f.fail(errors.New("write after Finish"))
	}
	if err := f.w.Flush(); err != nil {
		return f.fail(unwrapPath(err))
	}
	return nil
}

// writeEach writes bufs to w one after the other.
func writeEach(w io.Writer, bufs [][]byte) (int64, error) {
	var n int64
	for _, b := range bufs {
		k, err := w.Write(b)
		n += int64(k)
		if err != nil {
			return n, err
		}
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
// policy calls it). An output in place is fsynced only if it supports it
// (a block device); a character device, FIFO or socket is only flushed.
func (f *File) Sync() error {
	if f.err != nil {
		return f.err
	}
	if err := f.w.Flush(); err != nil {
		return f.fail(unwrapPath(err))
	}
	if f.f != nil {
		if err := f.f.Sync(); err != nil && !(f.InPlace() && unsupportedSync(err)) {
			return f.fail(unwrapPath(err))
		}
	}
	return nil
}

// unsupportedSync is fsync's answer on a file that has nothing to sync
// (a character device, a FIFO).
func unsupportedSync(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EROFS)
}

// Finish flushes, fsyncs and closes the file without renaming it: the
// caller may read TempName back before Commit. Idempotent.
func (f *File) Finish() error {
	if f.closed || f.err != nil {
		return f.err
	}
	err := f.Sync()
	if f.closer != nil {
		if cerr := f.closer.Close(); err == nil && cerr != nil {
			err = f.fail(unwrapPath(cerr))
		}
	}
	f.closed = true
	return err
}

// Commit finishes the file and moves it to its path (links followed):
// renamed over an old file with Force, linked without it so that a file
// that appeared meanwhile is refused (fs.ErrExist). On any error the
// temporary file is removed and nothing is written. An output in place
// is only finished.
func (f *File) Commit() error { return f.CommitChecked(nil) }

// CommitChecked is write → read back → commit in one step: it finishes
// the file, runs check on the temporary file (a log's full verify, an
// MCAP file's index), and commits only if check succeeds; otherwise the
// file is removed and the error says nothing was written. An output in
// place cannot be read back: it is finished without check.
func (f *File) CommitChecked(check func(written string) error) error {
	if f.done {
		return f.err
	}
	err := f.Finish()
	if err == nil && check != nil && !f.InPlace() {
		if cerr := check(f.tmp); cerr != nil {
			f.err = fmt.Errorf("%s does not read back, nothing written: %w", f.path, cerr)
			err = f.err
		}
	}
	if err == nil && !f.InPlace() {
		err = live.commit(f)
	}
	if err != nil {
		f.Abort()
		return err
	}
	f.done = true
	return nil
}

// Abort removes the temporary file (an output in place keeps what was
// written). It does nothing after Commit, so it may be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	if !f.closed {
		if f.closer != nil {
			f.closer.Close()
		}
		f.closed = true
	}
	if f.InPlace() {
		f.done = true
		return
	}
	live.remove(f)
}

// commitTemp moves the finished temporary file tmp to target and syncs the
// directory: with overwrite a rename (a new inode under the name), without
// it a hard link that fails if target exists (no check-then-replace race),
// or a rename where the filesystem has no hard links and target is still
// absent.
func commitTemp(tmp, target string, overwrite bool) error {
	var err error
	if overwrite {
		err = os.Rename(tmp, target)
	} else if err = os.Link(tmp, target); err == nil {
		err = os.Remove(tmp)
	} else if errors.Is(err, fs.ErrExist) {
		return fs.ErrExist
	} else if _, serr := os.Lstat(target); serr == nil {
		return fs.ErrExist
	} else {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		return unwrapLink(err)
	}
	syncDir(filepath.Dir(target))
	return nil
}

// syncDir makes a rename durable. Its failure is not the output's: the
// file itself is complete and synced.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

func unwrapLink(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return unwrapPath(err)
}
