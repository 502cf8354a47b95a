package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Live is a file written in place as it grows, for a log that is read
// while it is written (record's log, sim --log): a reader sees it under
// its name from the first byte. A regular file is created as a new inode
// that holds an exclusive flock(2) until Close: a second CreateLive of the
// same file is refused with a LockedError naming the holder, Force or not,
// and an unlocked old file is replaced by a rename, never truncated (a
// reader of the old one keeps reading the old one). A device, FIFO or
// socket is written in place, unlocked. An interrupt leaves a live file as
// far as it got, like a recording.
type Live struct {
	path    string    // as given: errors name it
	target  string    // links followed: what Remove removes
	f       *os.File  // nil for a socket
	sink    io.Writer // f or the socket
	closer  io.Closer
	regular bool // a file the Live made: synced, locked, removable
	w       *bufio.Writer
	err     error
}

// CreateLive creates path for writing in place. Links are followed; an
// existing regular file is replaced only with o.Force ("-" is refused: a
// live log takes a path).
func CreateLive(path string, o Options) (*Live, error) {
	o.Stdout = nil
	t, err := resolve(path, o)
	if errors.Is(err, fs.ErrExist) {
		// An existing file: createLocked says whether a writer holds it
		// before it says that only Force replaces it.
		if ft, ferr := resolve(path, Options{Force: true}); ferr == nil && ft.kind == kindTemp {
			t, err = ft, nil
		}
	}
	if err != nil {
		return nil, err
	}
	l := &Live{path: path, target: t.target}
	switch t.kind {
	case kindSocket, kindDevice:
		if l.f, l.sink, l.closer, err = openNode(t); err != nil {
			return nil, err
		}
	default:
		f, err := createLocked(path, t.target, o.Force)
		if err != nil {
			return nil, err
		}
		l.f, l.sink, l.closer, l.regular = f, f, f, true
	}
	l.w = bufio.NewWriterSize(l.sink, 4<<10)
	return l, nil
}

// createLocked makes target a new locked file: a temporary file, locked
// before it has the name, linked to an absent target, or renamed over an
// existing one whose lock it could take (and only while it holds that
// lock, so two writers cannot both replace it). A rename that found the
// name taken by another inode meanwhile starts again.
func createLocked(path, target string, force bool) (*os.File, error) {
	live.mu.Lock() // the temporary file exists only inside, for Discard
	defer live.mu.Unlock()
	if live.discarded {
		return nil, fmt.Errorf("create %s: interrupted", path)
	}
	fail := func(err error) (*os.File, error) {
		var le *LockedError
		if errors.As(err, &le) || errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		return nil, fmt.Errorf("create %s: %w", path, unwrapLink(err))
	}
	for {
		f, tmp, err := createTemp(target)
		if err != nil {
			return fail(err)
		}
		done, err := claim(f, tmp, path, target, force)
		if err != nil || !done {
			f.Close()
			os.Remove(tmp)
		}
		if err != nil {
			return fail(err)
		}
		if done {
			syncDir(filepath.Dir(target))
			return f, nil
		}
	}
}

// claim gives the locked temporary file f (at tmp) the name target; false
// without an error means the name changed under it: try again.
func claim(f *os.File, tmp, path, target string, force bool) (bool, error) {
	if err := lockFile(f); err != nil {
		return false, err
	}
	err := os.Link(tmp, target)
	if err == nil {
		return true, os.Remove(tmp)
	}
	if !errors.Is(err, fs.ErrExist) {
		if _, serr := os.Lstat(target); serr == nil {
			err = fs.ErrExist // no hard links here: the name is taken
		} else {
			// A filesystem without hard links, the name free: a rename.
			return true, os.Rename(tmp, target)
		}
	}
	old, err := os.Open(target)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	defer old.Close() // and so its lock, once the rename is done
	if err := lockOld(old, path); err != nil {
		return false, err
	}
	if !force {
		return false, &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	if !sameFile(old, target) {
		return false, nil
	}
	return true, os.Rename(tmp, target)
}

// sameFile reports whether the open f is still what path names.
func sameFile(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// File is the descriptor, for a writer with its own buffering (a logfmt
// writer writes to it directly; Write's buffer then stays empty); nil for
// a socket.
func (l *Live) File() *os.File { return l.f }

// Regular reports a regular file, which Sync fsyncs and which holds the
// lock; a device, FIFO or socket is only written.
func (l *Live) Regular() bool { return l.regular }

// Write appends p; after an error every Write returns it.
func (l *Live) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.w.Write(p)
	if err != nil {
		l.fail(err)
	}
	return n, l.err
}

func (l *Live) fail(err error) {
	if l.err == nil {
		l.err = fmt.Errorf("write %s: %w", l.path, unwrapPath(err))
	}
}

// Sync flushes the buffer and, for a regular file, fsyncs it.
func (l *Live) Sync() error {
	if l.err == nil {
		if err := l.w.Flush(); err != nil {
			l.fail(err)
		}
	}
	if l.err == nil && l.regular {
		if err := l.f.Sync(); err != nil {
			l.fail(err)
		}
	}
	return l.err
}

// Close flushes and closes the file, which releases the lock; it does not
// fsync (Finish does). The result is the first error since CreateLive.
func (l *Live) Close() error {
	if l.closer == nil {
		return l.err
	}
	if l.err == nil {
		if err := l.w.Flush(); err != nil {
			l.fail(err)
		}
	}
	if err := l.closer.Close(); err != nil {
		l.fail(err)
	}
	l.closer = nil
	return l.err
}

// Finish is Sync, then Close.
func (l *Live) Finish() error {
	l.Sync()
	return l.Close()
}

// Remove closes the file and removes it if CreateLive made it (a device,
// FIFO or socket is left alone): for an output abandoned before it held
// anything.
func (l *Live) Remove() {
	l.Close()
	if l.regular {
		os.Remove(l.target)
	}
}
