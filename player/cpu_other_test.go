//go:build !unix

package player

import "time"

// cpuTime is not measured here (the benchmark then reports cpu 0).
func cpuTime() time.Duration { return 0 }
