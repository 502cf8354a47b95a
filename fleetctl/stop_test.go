package fleetctl

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// A stop query's payload: nothing or a small JSON object with a reason;
// anything else is refused with ErrRequest.
func TestParseStopRequest(t *testing.T) {
	for payload, want := range map[string]string{
		``:                         "",
		"  \n":                     "",
		`{}`:                       "",
		`{"reason": "tests done"}`: "tests done",
		` {"reason": "ünïcode"} `:  "ünïcode",
	} {
		r, err := ParseStopRequest([]byte(payload))
		if err != nil || r.Reason != want {
			t.Errorf("%q: %+v %v, want reason %q", payload, r, err, want)
		}
	}
	for name, payload := range map[string]string{
		"not JSON":          `stop`,
		"truncated":         `{"reason": "x`,
		"unknown field":     `{"file": "/etc/passwd"}`,
		"two objects":       `{} {}`,
		"an array":          `["stop"]`,
		"a number reason":   `{"reason": 1}`,
		"a NUL":             `{"reason": "a\u0000b"}`,
		"an escape":         `{"reason": "\u001b[2J"}`,
		"a newline":         `{"reason": "a\nb"}`,
		"oversized":         `{"reason": "` + strings.Repeat("x", MaxStopRequest) + `"}`,
		"trailing garbage":  `{}x`,
		"a string not obj":  `"stop"`,
		"null then garbage": `null null`,
	} {
		if r, err := ParseStopRequest([]byte(payload)); !errors.Is(err, ErrRequest) {
			t.Errorf("%s: %+v %v, want ErrRequest", name, r, err)
		}
	}
}

// A fleet stops only on a query for its own stop key: its name or *,
// never a wider expression.
func TestCheckStopKey(t *testing.T) {
	for _, k := range []string{"vrlog/fleet/run1/stop", "vrlog/fleet/*/stop"} {
		if err := checkStopKey(k); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	for _, k := range []string{"vrlog/**", "vrlog/fleet/**", "vrlog/fleet/**/stop", "vrlog/fleet/run1", "vrlog/fleet/run1/stop/x", "vrlog/record/run1/stop", "**"} {
		if err := checkStopKey(k); !errors.Is(err, ErrRequest) {
			t.Errorf("%s: %v, want ErrRequest", k, err)
		}
	}
	for _, n := range []string{"", "a/b", "*", "**", "a$b", "run?"} {
		if err := CheckName(n); !errors.Is(err, ErrRequest) {
			t.Errorf("name %q: %v, want ErrRequest", n, err)
		}
	}
}

// Whatever arrives, ParseStopRequest answers without a panic: a request
// or ErrRequest, and a reason it accepts is bounded and printable.
func FuzzParseStopRequest(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"reason":"ci done"}`, `{"reason":1}`, `{} {}`, `{"x":1}`, "{\"reason\":\"\\u0007\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseStopRequest(b)
		if err != nil {
			if !errors.Is(err, ErrRequest) {
				t.Fatalf("%q: %v is not ErrRequest", b, err)
			}
			return
		}
		if len(b) > MaxStopRequest || len(r.Reason) > MaxStopRequest || !utf8.ValidString(r.Reason) {
			t.Fatalf("%q: accepted %+v", b, r)
		}
		for _, c := range r.Reason {
			if c < 0x20 || c == 0x7f {
				t.Fatalf("%q: a control character in the accepted reason %q", b, r.Reason)
			}
		}
	})
}
