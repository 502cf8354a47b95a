// Package cpulatency keeps the CPUs out of deep idle states while a
// latency-sensitive job runs, through the kernel's PM QoS interface.
//
// An idle CPU that halts takes long to wake: on a VM, whose idle vCPU the
// host deschedules, a timer or a packet then waits for the host to run the
// vCPU again, often milliseconds. Replay's pacing thread sleeps between
// records and so does the subscriber it feeds, and those wake-ups, not the
// pacer, made replay's p99 as received milliseconds on the project's VM
// (docs/BENCHMARKS.md, "replay"). cyclictest and tuned's latency profiles
// use the same request.
package cpulatency

import (
	"fmt"
	"time"
)

// Hold asks the kernel to keep every CPU's wake-up latency within max (0:
// no idle state deeper than polling) until release is called. The request
// belongs to the open file: it ends with release, or with the process.
// Writing it needs root or write access to the PM QoS device.
func Hold(max time.Duration) (release func() error, err error) {
	if max < 0 {
		return nil, fmt.Errorf("cpu latency %v: negative", max)
	}
	return hold(max)
}
