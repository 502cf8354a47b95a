//go:build linux

package cpulatency

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// device is the system-wide PM QoS CPU latency request (a 32-bit number
// of microseconds, written in the host's byte order; x86 and arm64 Linux
// are little-endian).
const device = "/dev/cpu_dma_latency"

func hold(max time.Duration) (func() error, error) { return holdAt(device, max) }

func holdAt(device string, max time.Duration) (func() error, error) {
	f, err := os.OpenFile(device, os.O_WRONLY, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("cpu latency request: %s does not exist (a kernel without PM QoS, or a container that does not pass the device through)", device)
	case err != nil:
		return nil, fmt.Errorf("cpu latency request: %w (needs root or write access to %s)", err, device)
	}
	// Anything but the character device (a file bind-mounted over it)
	// would take the request and do nothing.
	if st, err := f.Stat(); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		f.Close()
		return nil, fmt.Errorf("cpu latency request: %s is not the kernel's PM QoS device (not a character device)", device)
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(min(max.Microseconds(), 1<<31-1)))
	if _, err := f.Write(b[:]); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu latency request: write %s: %w", device, err)
	}
	return f.Close, nil
}
