package logfmt

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// TimeSpec is a point in time as a user gives it (--start, --end): an
// offset from a log's start, or an absolute unix time.
type TimeSpec struct {
	Ns       int64 // the offset, or unix nanoseconds when Absolute
	Absolute bool
}

// ParseTime reads a TimeSpec: seconds from the log start ("12.5", "-1"),
// a Go duration from the log start ("1m30s", "300ms"), or an RFC 3339
// time ("2024-05-01T10:03:00.25Z", any offset).
func ParseTime(s string) (TimeSpec, error) {
	t := strings.TrimSpace(s)
	if strings.ContainsAny(t, "T:") {
		at, err := time.Parse(time.RFC3339Nano, t)
		if err != nil {
			return TimeSpec{}, fmt.Errorf("%q: not an RFC 3339 time (2024-05-01T10:03:00.25Z): %w", s, err)
		}
		if at.Before(time.Unix(0, math.MinInt64)) || at.After(time.Unix(0, math.MaxInt64)) {
			return TimeSpec{}, fmt.Errorf("%q: outside the years 1677..2262", s)
		}
		return TimeSpec{Ns: at.UnixNano(), Absolute: true}, nil
	}
	d, err := parseOffset(t)
	if err != nil {
		return TimeSpec{}, fmt.Errorf("%q: want seconds from the log start (12.5), a duration (1m30s) or an RFC 3339 time", s)
	}
	return TimeSpec{Ns: int64(d)}, nil
}

// parseOffset reads seconds ("12.5", exact to the nanosecond) or a Go
// duration.
func parseOffset(s string) (time.Duration, error) {
	if s == "" || strings.ContainsAny(s, " _") {
		return 0, errors.New("empty")
	}
	if last := s[len(s)-1]; last >= '0' && last <= '9' || last == '.' {
		return time.ParseDuration(s + "s")
	}
	return time.ParseDuration(s)
}

// Window is a time window [Start, End) as the user gives it; a nil bound
// is open. Duration > 0 puts the end at Start + Duration.
type Window struct {
	Start, End *TimeSpec
	Duration   time.Duration
}

// WindowError is a bound of a window that does not parse, or two that
// exclude each other (Bound "end", Err ErrEndAndDuration). Bound names the
// bound ("start", "end", "duration"): a command line names its flag.
type WindowError struct {
	Bound string
	Err   error
}

func (e *WindowError) Error() string { return e.Bound + " " + e.Err.Error() }

// Unwrap returns the cause.
func (e *WindowError) Unwrap() error { return e.Err }

// ErrEndAndDuration is a window given both an end and a duration.
var ErrEndAndDuration = errors.New("and duration: give one")

// ParseWindow reads the start, the end and the duration of a window; ""
// leaves one out. Errors are *WindowError.
func ParseWindow(start, end, duration string) (Window, error) {
	var w Window
	for _, f := range []struct {
		bound, v string
		dst      **TimeSpec
	}{{"start", start, &w.Start}, {"end", end, &w.End}} {
		if f.v == "" {
			continue
		}
		t, err := ParseTime(f.v)
		if err != nil {
			return w, &WindowError{Bound: f.bound, Err: err}
		}
		*f.dst = &t
	}
	if duration != "" {
		d, err := parseOffset(strings.TrimSpace(duration))
		if err != nil || d <= 0 {
			return w, &WindowError{Bound: "duration", Err: fmt.Errorf("%q: want seconds (2.5) or a duration (300ms) > 0", duration)}
		}
		if w.End != nil {
			return w, &WindowError{Bound: "end", Err: ErrEndAndDuration}
		}
		w.Duration = d
	}
	return w, nil
}

// IsZero reports whether w bounds nothing.
func (w Window) IsZero() bool { return w.Start == nil && w.End == nil && w.Duration == 0 }

// Range is a window placed on one clock: [Start, End), each bound only
// when its Has flag is set. The zero Range is unbounded.
type Range struct {
	Start, End       int64
	HasStart, HasEnd bool
}

// Contains reports whether t is in r.
func (r Range) Contains(t int64) bool {
	return (!r.HasStart || t >= r.Start) && (!r.HasEnd || t < r.End)
}

// Overlaps reports whether r meets the closed interval [lo, hi].
func (r Range) Overlaps(lo, hi int64) bool {
	return (!r.HasStart || r.Start <= hi) && (!r.HasEnd || r.End > lo)
}

// Bounded reports whether r has a bound.
func (r Range) Bounded() bool { return r.HasStart || r.HasEnd }

// ErrEmptyWindow means a window's end is not after its start.
var ErrEmptyWindow = errors.New("logfmt: empty time window (its end is not after its start)")

// Resolve places w on a clock whose log starts at start: offsets count
// from start, absolute times become fromUnix(unixNs) (nil: the clock is
// unix time itself, as the receive wall clock is).
func (w Window) Resolve(start int64, fromUnix func(int64) int64) (Range, error) {
	at := func(t *TimeSpec) int64 {
		switch {
		case !t.Absolute:
			return satAdd(start, t.Ns)
		case fromUnix != nil:
			return fromUnix(t.Ns)
		}
		return t.Ns
	}
	var r Range
	if w.Start != nil {
		r.Start, r.HasStart = at(w.Start), true
	}
	switch {
	case w.End != nil:
		r.End, r.HasEnd = at(w.End), true
	case w.Duration > 0:
		from := start
		if r.HasStart {
			from = r.Start
		}
		r.End, r.HasEnd = satAdd(from, int64(w.Duration)), true
	}
	if r.HasStart && r.HasEnd && r.End <= r.Start {
		return r, ErrEmptyWindow
	}
	return r, nil
}

// satAdd is a+b saturated to the int64 range.
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}
