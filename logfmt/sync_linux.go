//go:build linux

package logfmt

import (
	"os"
	"syscall"
)

type fder interface{ Fd() uintptr }

// fdatasync flushes file data (not all metadata) to the device.
func fdatasync(f fder) error {
	if file, ok := f.(*os.File); ok {
		rc, err := file.SyscallConn()
		if err != nil {
			return file.Sync()
		}
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = syscall.Fdatasync(int(fd)) }); err != nil {
			return err
		}
		return serr
	}
	return syscall.Fdatasync(int(f.Fd()))
}
