//go:build !linux

package outfile

import "os"

// writev writes bufs to f in order, one write each.
func writev(f *os.File, bufs [][]byte) (int64, error) { return writeEach(f, bufs) }
