//go:build !unix

package analyzer

import "time"

// cpuTime is unknown here: the benchmarks report wall-clock rates only.
func cpuTime() time.Duration { return 0 }
