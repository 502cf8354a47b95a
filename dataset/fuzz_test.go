package dataset

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// A label is refused or split at its first '=' into a non-blank key and a
// value, both valid UTF-8 without control characters.
func FuzzParseLabel(f *testing.F) {
	for _, s := range []string{"commit=abc", "a=b=c", "=x", "k=", "k=\n", "ключ=значение", "k=\xff", "novalue", " =v", `b=feat/ü "x", y`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, v, err := ParseLabel(s)
		if err != nil {
			return
		}
		if k+"="+v != s || strings.Contains(k, "=") || strings.TrimSpace(k) == "" {
			t.Fatalf("%q: split into %q and %q", s, k, v)
		}
		if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
			t.Fatalf("%q accepted", s)
		}
	})
}

// A marker is accepted only when it names this schema; anything else is
// an error, never a panic.
func FuzzMarker(f *testing.F) {
	for _, s := range []string{`{"schema": "vrlog.dataset/1"}`, `{"schema": "vrlog.dataset/2"}`, `{"schema": "vrlog.dataset/-1"}`,
		`{"schema": "vrlog.dataset/99999999999999999999"}`, `{"schema": 1}`, `[]`, `null`, ``, `{"schema": "vrlog.dataset/01"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkMarker(b) == nil && !strings.Contains(string(b), "vrlog.dataset/") {
			t.Fatalf("%q accepted", b)
		}
	})
}
