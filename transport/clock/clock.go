// Package clock reads the two clocks that every transport receive stamp uses:
// CLOCK_REALTIME (wall) and CLOCK_MONOTONIC (mono), in nanoseconds.
//
// The native transport library stamps RecvWallNs/RecvMonoNs with
// clock_gettime on these same clocks, so a Go-side MonoNow() is directly
// comparable with a sample's RecvMonoNs (Go's own time.Now monotonic reading
// is not exposed as a number, hence this package). Pure Go, no cgo.
package clock

import (
	"time"

	"golang.org/x/sys/unix"
)

// MonoNow returns CLOCK_MONOTONIC in nanoseconds.
func MonoNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("clock: clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}

// WallNow returns CLOCK_REALTIME in nanoseconds since the Unix epoch.
func WallNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_REALTIME, &ts); err != nil {
		panic("clock: clock_gettime(CLOCK_REALTIME): " + err.Error())
	}
	return ts.Nano()
}

// Monotonic returns a reader of CLOCK_MONOTONIC in nanoseconds that goes
// through Go's runtime clock (the vDSO, no system call: cheap enough for a
// spin loop). Go's monotonic clock is CLOCK_MONOTONIC on Linux; the
// offset between the two is measured once, between two clock_gettime
// calls (the tightest of a few tries, in case one was preempted).
func Monotonic() func() int64 {
	var base time.Time
	var off, best int64
	for i := range 8 {
		m1 := MonoNow()
		b := time.Now()
		m2 := MonoNow()
		if i == 0 || m2-m1 < best {
			base, off, best = b, m1+(m2-m1)/2, m2-m1
		}
	}
	return func() int64 { return off + int64(time.Since(base)) }
}
