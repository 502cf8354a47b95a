package codec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// UTSEpochOffsetSeconds is the number of seconds from the Universal Time
// Scale epoch (0001-01-01T00:00:00Z) to the unix epoch: 719162 days.
const UTSEpochOffsetSeconds int64 = 719162 * 24 * 60 * 60 // 62,135,596,800

// utsOffsetTicks is UTSEpochOffsetSeconds in 100 ns ticks.
const utsOffsetTicks = UTSEpochOffsetSeconds * 10_000_000

// Elapsed is (tNs - epochNs) / 1e9 in seconds, the SDK's elapsed. With
// epochNs 0 it is the absolute unix time in seconds.
func Elapsed(tNs, epochNs int64) float64 {
	d := tNs - epochNs
	if (tNs >= epochNs) != (d >= 0) { // the difference overflowed int64
		return (float64(tNs) - float64(epochNs)) / 1e9
	}
	return float64(d) / 1e9
}

// UnixNsToUTS converts unix nanoseconds to Universal Time Scale ticks (100 ns
// since 0001-01-01), rounding toward the past. Every int64 fits.
func UnixNsToUTS(ns int64) int64 {
	q := ns / 100
	if ns%100 < 0 {
		q--
	}
	return q + utsOffsetTicks
}

// UTSToUnixNs converts UTS ticks to unix nanoseconds; ErrOverflow when the
// result does not fit in an int64 (ticks before ~1677 or after ~2262).
func UTSToUnixNs(ticks int64) (int64, error) {
	if ticks < math.MinInt64+utsOffsetTicks {
		return 0, fmt.Errorf("uts %d: %w", ticks, ErrOverflow)
	}
	d := ticks - utsOffsetTicks
	if d > math.MaxInt64/100 || d < math.MinInt64/100 {
		return 0, fmt.Errorf("uts %d: %w", ticks, ErrOverflow)
	}
	return d * 100, nil
}

// FormatSeconds prints ns as seconds with exactly nine decimals, computed in
// integers: 1700000000123456789 → "1700000000.123456789", -5e8 → "-0.500000000".
func FormatSeconds(ns int64) string {
	sign, abs := "", uint64(ns)
	if ns < 0 {
		sign, abs = "-", uint64(-(ns+1))+1 // no overflow at MinInt64
	}
	return fmt.Sprintf("%s%d.%09d", sign, abs/1e9, abs%1e9)
}

// ParseSeconds parses a decimal number of seconds ("12", "-0.5",
// "1700000000.123456789") into nanoseconds exactly; more than nine decimals
// or an out-of-range value is an error.
func ParseSeconds(s string) (int64, error) {
	t := strings.TrimSpace(s)
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimPrefix(strings.TrimPrefix(t, "-"), "+")
	whole, frac, _ := strings.Cut(t, ".")
	if whole == "" && frac == "" || len(frac) > 9 || strings.ContainsAny(whole+frac, "+-_ ") {
		return 0, fmt.Errorf("codec: %q is not a number of seconds (up to 9 decimals)", s)
	}
	var w, f uint64
	var err error
	if whole != "" {
		if w, err = strconv.ParseUint(whole, 10, 64); err != nil {
			return 0, fmt.Errorf("codec: %q is not a number of seconds: %w", s, err)
		}
	}
	if frac != "" {
		if f, err = strconv.ParseUint(frac+strings.Repeat("0", 9-len(frac)), 10, 64); err != nil {
			return 0, fmt.Errorf("codec: %q is not a number of seconds: %w", s, err)
		}
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	if w > (limit-f)/1e9 {
		return 0, fmt.Errorf("codec: %q seconds: %w", s, ErrOverflow)
	}
	v := w*1e9 + f
	if neg {
		return int64(-v), nil // -v wraps correctly for v == 1<<63
	}
	return int64(v), nil
}

// rfc3339Nano9 is RFC 3339 with a fixed nine-digit fraction, so printed times
// line up in tables and sort as text.
const rfc3339Nano9 = "2006-01-02T15:04:05.000000000Z07:00"

// FormatRFC3339 prints ns as UTC RFC 3339 with nine fractional digits.
func FormatRFC3339(ns int64) string { return time.Unix(0, ns).UTC().Format(rfc3339Nano9) }

// ParseRFC3339 parses an RFC 3339 time (any fraction length, any offset) into
// unix nanoseconds; ErrOverflow outside the int64 range (1677..2262).
func ParseRFC3339(s string) (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("codec: %w", err)
	}
	if t.Before(time.Unix(0, math.MinInt64)) || t.After(time.Unix(0, math.MaxInt64)) {
		return 0, fmt.Errorf("codec: %s: %w", s, ErrOverflow)
	}
	return t.UnixNano(), nil
}

// TimeFormat selects how tools print a time.
type TimeFormat uint8

// Time formats for --time-format.
const (
	TimeUnix    TimeFormat = iota // seconds since 1970, nine decimals
	TimeElapsed                   // seconds since the session epoch, nine decimals
	TimeUTS                       // Universal Time Scale ticks
	TimeRFC3339                   // UTC, nine fractional digits
)

var timeFormatNames = [...]string{"unix", "elapsed", "uts", "rfc3339"}

func (f TimeFormat) String() string { return timeFormatNames[f] }

// ParseTimeFormat parses unix, elapsed, uts or rfc3339.
func ParseTimeFormat(s string) (TimeFormat, error) {
	for i, n := range timeFormatNames {
		if n == s {
			return TimeFormat(i), nil
		}
	}
	return 0, fmt.Errorf("codec: unknown time format %q (want unix, elapsed, uts or rfc3339)", s)
}

// Format prints ns in format f; epochNs is used by TimeElapsed only.
func (f TimeFormat) Format(ns, epochNs int64) string {
	switch f {
	case TimeElapsed:
		return FormatSeconds(ns - epochNs)
	case TimeUTS:
		return strconv.FormatInt(UnixNsToUTS(ns), 10)
	case TimeRFC3339:
		return FormatRFC3339(ns)
	default:
		return FormatSeconds(ns)
	}
}
