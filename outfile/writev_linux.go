package outfile

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// maxIov is the most buffers one writev takes (IOV_MAX).
const maxIov = 1024

// writev writes bufs to f in order with as few writev calls as it takes,
// resuming after a short write.
func writev(f *os.File, bufs [][]byte) (int64, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return writeEach(f, bufs)
	}
	var n int64
	var werr error
	for len(bufs) > 0 {
		// Empty buffers are dropped: writev of only empty ones writes nothing.
		for len(bufs) > 0 && len(bufs[0]) == 0 {
			bufs = bufs[1:]
		}
		if len(bufs) == 0 {
			break
		}
		batch := bufs[:min(len(bufs), maxIov)]
		var k int
		if err := rc.Write(func(fd uintptr) bool {
			k, werr = unix.Writev(int(fd), batch)
			return werr != unix.EAGAIN
		}); err != nil {
			return n, err
		}
		if werr == unix.EINTR {
			continue
		}
		if werr != nil {
			return n, &os.PathError{Op: "write", Path: f.Name(), Err: werr}
		}
		if k == 0 {
			return n, &os.PathError{Op: "write", Path: f.Name(), Err: io.ErrShortWrite}
		}
		n += int64(k)
		for k > 0 {
			if k >= len(bufs[0]) {
				k -= len(bufs[0])
				bufs = bufs[1:]
			} else {
				bufs[0] = bufs[0][k:]
				k = 0
			}
		}
	}
	return n, nil
}
