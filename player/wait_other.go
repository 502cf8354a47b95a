//go:build !linux

package player

import "time"

// preciseSleeper falls back to time.Sleep where clock_nanosleep with an
// absolute deadline is not available.
type preciseSleeper struct{ now func() int64 }

func newPreciseSleeper(now func() int64) *preciseSleeper { return &preciseSleeper{now: now} }

func (s *preciseSleeper) sleep(until int64) { time.Sleep(time.Duration(until - s.now())) }

func (s *preciseSleeper) close() {}
