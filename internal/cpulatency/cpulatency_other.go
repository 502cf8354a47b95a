//go:build !linux

package cpulatency

import (
	"errors"
	"time"
)

func hold(time.Duration) (func() error, error) {
	return nil, errors.New("cpu latency request: only on Linux (PM QoS)")
}
