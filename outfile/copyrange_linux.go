//go:build linux

package outfile

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// copyRange copies n bytes of src from offset off to the end of f in the
// kernel (copy_file_range: page cache to page cache, as cp does, the
// bytes never in this process); done false, with nothing written, where
// the kernel cannot copy between the two (another file system, an old
// kernel).
func copyRange(f, src *os.File, off, n int64) (written int64, done bool, err error) {
	for written < n {
		k, err := unix.CopyFileRange(int(src.Fd()), &off, int(f.Fd()), nil, int(n-written), 0)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case written == 0 && (errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL)):
			return 0, false, nil
		case err != nil:
			return written, true, &os.PathError{Op: "copy_file_range", Path: f.Name(), Err: err}
		case k == 0:
			return written, true, &os.PathError{Op: "copy_file_range", Path: src.Name(), Err: io.ErrUnexpectedEOF}
		}
		written += int64(k)
	}
	return written, true, nil
}
