package logfmt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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
