//go:build unix

package logfmt

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the process used so far:
// benchmarks report work per CPU second, which other load on a shared
// machine disturbs far less than work per wall second.
func processCPU() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
