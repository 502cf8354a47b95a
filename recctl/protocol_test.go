package recctl

import (
	"errors"
	"strings"
	"testing"
)

// Each verb takes the fields it uses and nothing else; a malformed,
// oversized or hostile payload is a bad request, never a panic.
func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		verb    Verb
		payload string
		want    Request
		bad     string // in the error; "" for none
	}{
		{Start, ``, Request{}, ""},
		{Start, `   `, Request{}, ""},
		{Start, `{}`, Request{}, ""},
		{Start, `{"file": "run-{time}", "note": "nightly"}`, Request{File: "run-{time}", Note: "nightly"}, ""},
		{Snapshot, `{"note": "oscillates"}`, Request{Note: "oscillates"}, ""},
		{Stop, `{"file": "x"}`, Request{}, "takes no file"},
		{Pause, `{"note": "x"}`, Request{}, "takes no note"},
		{Start, `{"file": `, Request{}, "want a JSON object"},
		{Start, `[1, 2]`, Request{}, "want a JSON object"},
		{Start, `{"path": "/etc"}`, Request{}, "unknown field"},
		{Start, `{} {}`, Request{}, "more after"},
		{Start, `{"file": 7}`, Request{}, "want a JSON object"},
		{Start, `{"note": "a\u0000b"}`, Request{}, "NUL"},
		{Start, `{"note": "` + strings.Repeat("x", MaxRequest) + `"}`, Request{}, "at most"},
	} {
		got, err := ParseRequest(tc.verb, []byte(tc.payload))
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s %.40q: %v", tc.verb, tc.payload, err)
		case tc.bad != "" && (err == nil || !errors.Is(err, ErrRequest) || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%s %.40q: error %v, want one saying %q", tc.verb, tc.payload, err, tc.bad)
		case err == nil && got != tc.want:
			t.Errorf("%s %.40q: %+v, want %+v", tc.verb, tc.payload, got, tc.want)
		}
	}
}

// A mutating verb acts only on a query for its own key.
func TestCheckQueryKey(t *testing.T) {
	for key, ok := range map[string]bool{
		"vrlog/record/cam/start":   true,
		"vrlog/record/*/start":     true,
		"vrlog/record/**/start":    false,
		"vrlog/record/**":          false,
		"vrlog/record/cam/*":       false,
		"vrlog/record/cam/x/start": false,
		"vrlog/**/start":           false,
	} {
		if err := checkQueryKey(key, Start); (err == nil) != ok {
			t.Errorf("%s: %v, want accepted %v", key, err, ok)
		}
	}
	if err := checkQueryKey("vrlog/record/**", Status); err != nil {
		t.Errorf("status answers any query: %v", err)
	}
}

func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{"cam-host": true, "r1": true, "": false, "a/b": false, "*": false, "a*": false, "$x": false, "a b": true} {
		if err := CheckName(name); (err == nil) != ok {
			t.Errorf("%q: %v, want accepted %v", name, err, ok)
		}
	}
}

// FuzzParseRequest: any payload gives a request or ErrRequest, and what
// parses is within the bounds.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"file":"a","note":"b"}`, `{"file":`, `[]`, `{"x":1}`, `{} {}`, "\x00", `{"note":"\u0000"}`} {
		f.Add(uint8(0), []byte(s))
		f.Add(uint8(1), []byte(s))
	}
	f.Fuzz(func(t *testing.T, v uint8, payload []byte) {
		verb := Verbs[int(v)%len(Verbs)]
		r, err := ParseRequest(verb, payload)
		if err != nil {
			if !errors.Is(err, ErrRequest) {
				t.Fatalf("%v: not an ErrRequest", err)
			}
			return
		}
		if len(r.File)+len(r.Note) > MaxRequest || (r.File != "" && verb != Start) || (r.Note != "" && verb != Start && verb != Snapshot) {
			t.Fatalf("%s %q parsed to %+v", verb, payload, r)
		}
	})
}
