//go:build linux

package cpulatency

import (
	"encoding/binary"
	"fmt"
	"os"
	"time"
)

// device is the system-wide PM QoS CPU latency request (a 32-bit number
// of microseconds, written in the host's byte order; x86 and arm64 Linux
// are little-endian).
const device = "/dev/cpu_dma_latency"

func hold(max time.Duration) (func() error, error) {
	f, err := os.OpenFile(device, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("cpu latency request: %w (needs root or write access to %s)", err, device)
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(min(max.Microseconds(), 1<<31-1)))
	if _, err := f.Write(b[:]); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu latency request: write %s: %w", device, err)
	}
	return f.Close, nil
}
