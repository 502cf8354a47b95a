//go:build linux

package cpulatency

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The request is held while the file is open: the kernel reports the
// effective system-wide value back through the same device (a read gives
// the current target in µs).
func TestHoldWhileOpen(t *testing.T) {
	if _, err := os.Stat(device); err != nil {
		t.Skipf("no %s on this machine: %v", device, err)
	}
	release, err := Hold(0)
	if errors.Is(err, os.ErrPermission) {
		t.Skipf("not permitted here (needs root): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := current(t); got != 0 {
		t.Errorf("while held: target %d µs, want 0", got)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	// After release the target is the default again, unless another
	// process holds a request of its own: only logged.
	t.Logf("after release: target %d µs", current(t))
}

// What is not the kernel's device is refused by name, never written to as
// if it held the request.
func TestNotTheDevice(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "cpu_dma_latency")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{plain: "not a character device", filepath.Join(dir, "missing"): "does not exist"} {
		_, err := holdAt(path, 0)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", path, err, want)
		}
	}
	if b, _ := os.ReadFile(plain); len(b) != 0 {
		t.Errorf("the plain file was written: %x", b)
	}
}

func TestNegative(t *testing.T) {
	if _, err := Hold(-1); err == nil {
		t.Fatal("a negative latency was accepted")
	}
}

func current(t *testing.T) uint32 {
	t.Helper()
	f, err := os.Open(device)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [4]byte
	if _, err := f.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
