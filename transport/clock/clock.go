// Package clock reads the two clocks that every transport receive stamp uses:
// CLOCK_REALTIME (wall) and CLOCK_MONOTONIC (mono), in nanoseconds.
//
// The native transport library stamps RecvWallNs/RecvMonoNs with
// clock_gettime on these same clocks, so a Go-side MonoNow() is directly
// comparable with a sample's RecvMonoNs (Go's own time.Now monotonic reading
// is not exposed as a number, hence this package). Pure Go, no cgo.
package clock

import "golang.org/x/sys/unix"

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
