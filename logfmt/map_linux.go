package logfmt

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f read-only (ReaderOptions.Map), advising
// the kernel that it is read in order.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	_ = unix.Madvise(m, unix.MADV_SEQUENTIAL)
	return m, nil
}

func unmapFile(m []byte) { _ = unix.Munmap(m) }
