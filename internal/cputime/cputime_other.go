//go:build !unix

// Package cputime reads the process's CPU time, for benchmarks that report
// work per CPU second.
package cputime

import "time"

// Process is unknown here: 0, and benchmarks report no per-CPU-second rate.
func Process() time.Duration { return 0 }
