//go:build !unix

package logfmt

import "time"

// processCPU is unknown here: benchmarks report no per-CPU-second rate.
func processCPU() time.Duration { return 0 }
