//go:build unix

// Package cputime reads the process's CPU time, for benchmarks that report
// work per CPU second: a figure other load on a shared machine disturbs far
// less than work per wall second.
package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time (user and system) the process used so far; 0
// when it cannot be read.
func Process() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
