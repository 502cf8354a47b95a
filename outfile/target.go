package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// kind is how an output is written.
type kind uint8

const (
	kindTemp   kind = iota // a temporary file next to the target, committed
	kindDevice             // an existing device or FIFO, written in place
	kindSocket             // an existing Unix socket, connected to and written
	kindStdout             // "-": standard output
)

// target is an output path resolved.
type target struct {
	path   string // as given
	target string // links followed
	kind   kind
	exists bool // a regular file is there (only Force replaces it)
	stdout io.Writer
}

// maxLinks bounds a chain of symbolic links, as the kernel's ELOOP does.
const maxLinks = 40

// resolve says where and how path is written, refusing what may not be:
// a directory, an existing regular file (or block device) without Force,
// "-" where there is no standard output to write to.
func resolve(path string, o Options) (target, error) {
	t := target{path: path, target: path}
	switch {
	case path == "":
		return t, errors.New("outfile: give a file path")
	case path == "-" && o.Stdout == nil:
		return t, errors.New("outfile: - (standard output) cannot take this output: give a file path")
	case path == "-":
		t.kind, t.stdout = kindStdout, o.Stdout
		return t, nil
	}
	// Stat follows every link, /proc's magic ones (/dev/stdout onto a
	// pipe) included: what is at the end decides.
	st, err := os.Stat(path)
	if err == nil {
		m := st.Mode()
		switch {
		case m.IsDir():
			return t, fmt.Errorf("%s: is a directory", path)
		case m&fs.ModeSocket != 0:
			t.kind = kindSocket
			return t, nil
		case m&fs.ModeCharDevice != 0, m&fs.ModeNamedPipe != 0:
			t.kind = kindDevice
			return t, nil
		case m&fs.ModeDevice != 0: // a block device: a disk, its data replaced
			if !o.Force {
				return t, &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
			}
			t.kind = kindDevice
			return t, nil
		case !m.IsRegular():
			return t, fmt.Errorf("%s: cannot write a %v file", path, m.Type())
		case throughDescriptor(path):
			// /dev/stdout onto a file (`> out.vrlog`): the descriptor's
			// file, written in place as the shell opened it.
			t.kind = kindDevice
			return t, nil
		case !o.Force:
			return t, &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
		}
		t.exists = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return t, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	if t.target, err = followLinks(path); err != nil {
		return t, fmt.Errorf("create %s: %w", path, err)
	}
	return t, nil
}

// followLinks follows path's chain of symbolic links to the name that is
// not one (an existing regular file, or the missing target of a dangling
// link, which the output creates): the temporary file goes next to it,
// and the rename replaces it, not the link.
func followLinks(path string) (string, error) {
	for range maxLinks {
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		to, err := os.Readlink(path)
		if err != nil {
			return "", unwrapPath(err)
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return "", errors.New("too many levels of symbolic links")
}

// throughDescriptor reports a path that names an open descriptor
// (/dev/stdout, /dev/fd/N, /proc/self/fd/N, a link to one): its file is the
// one the process was given, to be written where it is, not replaced.
func throughDescriptor(path string) bool {
	for range maxLinks {
		abs, err := filepath.Abs(path)
		if err != nil {
			return false
		}
		if strings.HasPrefix(abs, "/dev/fd/") || strings.HasPrefix(abs, "/proc/") {
			return true
		}
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			return false
		}
		to, err := os.Readlink(path)
		if err != nil {
			return false
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return false
}

// dialSocket connects to a Unix stream socket, the one way to write into
// it (open(2) refuses a socket with ENXIO).
func dialSocket(path string) (net.Conn, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			err = oe.Err
		}
		return nil, fmt.Errorf("connect to the socket: %w", unwrapPath(err))
	}
	return c, nil
}

// InPlace reports whether path names an output that is written where it
// is, with no temporary file, rename, read back or fsync: "-" or an
// existing device, FIFO or socket (links followed).
func InPlace(path string) bool {
	if path == "-" {
		return true
	}
	st, err := os.Stat(path)
	return err == nil && !st.Mode().IsRegular() && !st.IsDir()
}

// IsStdout reports whether path is the process's standard output: "-", or
// a name of the file it writes to (/dev/stdout, /dev/fd/1, the file or
// pipe a shell redirected it to). A verb writing an output there prints
// its own report elsewhere.
func IsStdout(path string) bool {
	if path == "-" {
		return true
	}
	a, err1 := os.Stat(path)
	b, err2 := os.Stdout.Stat()
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}
