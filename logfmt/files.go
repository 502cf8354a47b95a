package logfmt

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
)

// openLogFile opens a log for reading and returns its size. A log is
// read with random access (the index at its end, chunks in time order),
// so only a regular file will do: a FIFO, a pipe (/dev/stdin in
// `cat run.vrlog | vrlog info /dev/stdin`), a device or a directory is
// refused with ErrNotRegular before it is opened, as opening a FIFO
// without a writer would block.
func openLogFile(path string) (*os.File, int64, error) {
	st, err := os.Stat(path)
	if err == nil && !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, fileKind(st.Mode()))
	}
	var f *os.File
	if err == nil {
		f, err = os.Open(path)
	}
	if err == nil {
		st, err = f.Stat()
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			pe.Op = "open"
		}
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// fileKind names a non-regular file type and says what to do instead.
func fileKind(m fs.FileMode) string {
	const save = "a log is read with random access: save the stream to a file first"
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a pipe or FIFO; " + save
	case m&fs.ModeSocket != 0:
		return "a socket; " + save
	case m&fs.ModeDevice != 0:
		return "a device; " + save
	}
	return m.Type().String()
}

// createTemp creates a new file next to path, named .BASE.tmp-N, with
// mode 0666 less the umask like any file a user creates.
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	for i := 0; ; i++ {
		name := filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d", base, rand.Uint32()))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		return f, err
	}
}

// commitTemp moves the finished file tmp to path and syncs the directory,
// so that the new name survives a power loss. Without overwrite it links
// tmp to path, which fails if path exists (no check-then-replace race),
// and falls back to a rename where hard links are not supported.
func commitTemp(tmp, path string, overwrite bool) error {
	var err error
	if overwrite {
		err = os.Rename(tmp, path)
	} else if err = os.Link(tmp, path); err == nil {
		err = os.Remove(tmp)
	} else if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: %w", path, ErrExists)
	} else if _, serr := os.Lstat(path); serr == nil {
		return fmt.Errorf("%s: %w", path, ErrExists)
	} else {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync directory of %s: %w", path, err)
	}
	return nil
}
