package logfmt

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	for in, want := range map[string]TimeSpec{
		"12.5":                           {Ns: 12_500_000_000},
		"-1":                             {Ns: -1e9},
		"0.000000001":                    {Ns: 1},
		"1m30s":                          {Ns: 90e9},
		"300ms":                          {Ns: 300e6},
		"2024-05-01T10:00:00.5Z":         {Ns: 1714557600_500000000, Absolute: true},
		"2024-05-01T12:00:00.5+02:00":    {Ns: 1714557600_500000000, Absolute: true},
		" 7 ":                            {Ns: 7e9},
		"1700000000.123456789":           {Ns: 1700000000_123456789},
		"2024-05-01T10:00:00.123456789Z": {Ns: 1714557600_123456789, Absolute: true},
	} {
		got, err := ParseTime(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "12,5", "1_0", "2024-13-01T00:00:00Z", "10:00", "3000-01-01T00:00:00Z"} {
		if _, err := ParseTime(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestWindowResolve(t *testing.T) {
	const start = int64(1_000_000_000_000)
	w, err := ParseWindow("10", "", "2.5")
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.Resolve(start, nil)
	if err != nil || r != (Range{Start: start + 10e9, End: start + 12_500_000_000, HasStart: true, HasEnd: true}) {
		t.Fatalf("%+v %v", r, err)
	}
	if !r.Contains(start+10e9) || r.Contains(start+12_500_000_000) || r.Contains(start) {
		t.Fatal("Contains is not [start, end)")
	}
	// Absolute times go through the clock's conversion.
	w, _ = ParseWindow("", "1970-01-01T00:16:40Z", "")
	r, _ = w.Resolve(start, func(unix int64) int64 { return unix - 5 })
	if r.HasStart || !r.HasEnd || r.End != 1000e9-5 {
		t.Fatalf("%+v", r)
	}
	if r, _ := (Window{}).Resolve(start, nil); r.Bounded() || !r.Contains(-1<<63) {
		t.Fatal("the zero window bounds something")
	}
	w, _ = ParseWindow("5", "2", "")
	if _, err := w.Resolve(start, nil); !errors.Is(err, ErrEmptyWindow) {
		t.Fatalf("end before start: %v", err)
	}
	// The library's errors name the bound, never a flag (a command line
	// names its flag: cliutil.WindowUsage).
	for c, bound := range map[[3]string]string{{"yesterday", "", ""}: "start", {"", "soon", ""}: "end", {"", "1", "1"}: "end",
		{"", "", "-1"}: "duration", {"", "", "0"}: "duration"} {
		_, err := ParseWindow(c[0], c[1], c[2])
		var we *WindowError
		if !errors.As(err, &we) || we.Bound != bound || strings.Contains(err.Error(), "--") {
			t.Errorf("%q: %v (want a WindowError of the %s, no flag)", c, err, bound)
		}
	}
	if w, _ := ParseWindow("", "", "1m"); w.Duration != time.Minute || w.IsZero() {
		t.Fatal("duration")
	}
}
