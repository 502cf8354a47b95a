// Package outfiletest makes the special files that tests of outputs need,
// private to the test: character devices (never the machine's own
// /dev/null or /dev/full), FIFOs and their readers.
package outfiletest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Device numbers of the memory devices tests use (Linux, major 1).
const (
	NullMinor = 3 // writes vanish
	FullMinor = 7 // writes fail with ENOSPC
)

// Mknod makes the character device 1,minor named name in a directory of
// the test's and returns its path. It skips the test where devices cannot
// be made (not root, no CAP_MKNOD) or opened (a device cgroup).
func Mknod(t testing.TB, name string, minor int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|minor); err != nil {
		t.Skipf("mknod %s: %v: needs root for a private device node (not a defect of the code under test)", name, err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("open the private device %s: %v (a device cgroup?)", name, err)
	}
	f.Close()
	return p
}

// IsDevice fails the test unless p is still the character device 1,minor.
func IsDevice(t testing.TB, p string, minor int) {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Errorf("%s: %v", p, err)
		return
	}
	if st.Mode()&os.ModeCharDevice == 0 || st.Sys().(*syscall.Stat_t).Rdev != 1<<8|uint64(minor) {
		t.Errorf("%s is no longer the device 1,%d: %v", p, minor, st.Mode())
	}
}

// Reader opens the FIFO at p for reading in the background and returns
// what it reads until the writer closes it: the FIFO's reader, which its
// writer's open waits for.
func Reader(p string) <-chan []byte {
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(p)
		got <- b
	}()
	return got
}

// Mkfifo makes a FIFO named name in a directory of the test's.
func Mkfifo(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// IsFIFO fails the test unless p is still a FIFO.
func IsFIFO(t testing.TB, p string) {
	t.Helper()
	if st, err := os.Lstat(p); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a FIFO: %v %v", p, st, err)
	}
}
