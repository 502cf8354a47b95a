//go:build linux

package player

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// preciseSleeper sleeps to an absolute deadline with
// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME): no drift from computing
// a relative duration, and no Go timer, which can wake a millisecond late.
// The publishing goroutine is locked to its thread for the run, and that
// thread gets a timer slack of 1 ns (the default adds up to 50 µs to every
// wake-up) and, where the kernel has them (EEVDF, Linux 6.12), a short
// scheduler slice: a thread that asks for a short slice gets an earlier
// virtual deadline and preempts the running task when its timer fires,
// instead of waiting for the task's slice to end. Neither needs a
// privilege; close restores both.
type preciseSleeper struct {
	off   int64 // CLOCK_MONOTONIC minus Options.Now
	slack int   // the thread's timer slack before the run
	attr  *unix.SchedAttr
}

// pacingSlice is the scheduler slice the pacing thread asks for (the
// kernel's minimum is 100 µs).
const pacingSlice = 100_000

func newPreciseSleeper(now func() int64) *preciseSleeper {
	runtime.LockOSThread()
	s := &preciseSleeper{slack: -1}
	if v, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil {
		s.slack = v
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	}
	if a, err := unix.SchedGetAttr(0, 0); err == nil && a.Policy == unix.SCHED_NORMAL && a.Runtime == 0 {
		short := *a
		short.Runtime = pacingSlice
		if unix.SchedSetAttr(0, &short, 0) == nil {
			s.attr = a
		}
	}
	// Options.Now is Go's monotonic clock (CLOCK_MONOTONIC) from some base:
	// the offset from the reading whose bracket is narrowest.
	best := int64(-1)
	for range 5 {
		var ts unix.Timespec
		a := now()
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
			break
		}
		b := now()
		if best < 0 || b-a < best {
			best, s.off = b-a, ts.Nano()-(a+b)/2
		}
	}
	return s
}

// sleep returns at until (on Options.Now's clock) or a little after.
func (s *preciseSleeper) sleep(until int64) {
	ts := unix.NsecToTimespec(until + s.off)
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
	}
}

func (s *preciseSleeper) close() {
	if s.attr != nil {
		unix.SchedSetAttr(0, s.attr, 0)
	}
	if s.slack > 0 {
		unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(s.slack), 0, 0, 0)
	}
	runtime.UnlockOSThread()
}
