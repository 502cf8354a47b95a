package keyexpr

import (
	"errors"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pat, subject string
		want         bool
	}{
		{"vr/r1/state", "vr/r1/state", true},
		{"vr/r1/state", "vr/r1/state/x", false},
		{"vr/*/state", "vr/r1/state", true},
		{"vr/*/state", "vr/r1/x/state", false}, // * is one level
		{"vr/*", "vr/r1/state", false},
		{"vr/**", "vr/r1/state", true},
		{"vr/**", "vr", true}, // ** may be no level
		{"vr/**/state", "vr/state", true},
		{"vr/**/state", "vr/r1/a/b/state", true},
		{"vr/**/state", "vr/r1/a/b/stat", false},
		{"**", "anything/at/all", true},
		{"**/front", "vr/r1/camera/front", true},
		{"**/camera/**", "vr/r1/camera/front", true},
		{"**/camera/**", "vr/r1/cam/front", false},
		{"vr/**/**/state", "vr/state", true},
		{"vr/r1/camera/fr$*", "vr/r1/camera/front", true},
		{"vr/r1/camera/fr$*", "vr/r1/camera/rear", false},
		{"vr/r$*/state", "vr/r12/state", true},
		{"vr/r$*/state", "vr/r1/x/state", false}, // $* stays inside its level
		{"vr/$*x$*y/s", "vr/axbyy/s", true},
		{"vr/$*x$*y/s", "vr/ayx/s", false},
		{"a/$*/b", "a/anything/b", true},
		{"vr.r1", "vrxr1", false}, // '.' is literal
		{"vr/*/state", "vr//state", true},
		{"vrlog/clock/**", "vrlog/clock/vr/r1/time", true},
	} {
		p, err := Parse(c.pat)
		if err != nil {
			t.Fatalf("%q: %v", c.pat, err)
		}
		if got := p.Match(c.subject); got != c.want {
			t.Errorf("%q ~ %q = %v, want %v", c.pat, c.subject, got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for pat, hint := range map[string]string{
		"":              "empty",
		"vr/r1/":        "empty level",
		"/vr":           "empty level",
		"vr//x":         "empty level",
		"vr/r?/state":   "not allowed",
		"vr/#":          "not allowed",
		"vr/cam*":       "did you mean cam$*?",
		"vr/c**m":       "did you mean c$*m?",
		"vr/a$b":        "did you mean ab?",
		"vr/***":        "did you mean $*?",
		"vr/r1/cam$*x*": "did you mean cam$*x$*?",
	} {
		_, err := Parse(pat)
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), hint) {
			t.Errorf("%q: %v, want ErrSyntax saying %q", pat, err, hint)
		}
	}
}

func TestLiteral(t *testing.T) {
	for pat, want := range map[string]bool{"vr/r1/state": true, "vr/*/state": false, "vr/**": false, "vr/r$*": false} {
		if got := MustParse(pat).Literal(); got != want {
			t.Errorf("%q: Literal %v", pat, got)
		}
	}
	if (Pattern{}).Match("") || (Pattern{}).Literal() {
		t.Error("the zero Pattern matches")
	}
}

func TestSetReportsUnmatched(t *testing.T) {
	s, err := ParseSet([]string{"vr/*/state", "vr/r9/**"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Match("x", "vr/r1/state") || s.Match("acme/blob") {
		t.Fatal("Match")
	}
	err = s.Unmatched("channel", []string{"vr/r1/state", "acme/blob"})
	var nm *NoMatchError
	if !errors.As(err, &nm) || !errors.Is(err, ErrNoMatch) || nm.Pattern != "vr/r9/**" {
		t.Fatalf("Unmatched: %v", err)
	}
	if want := `"vr/r9/**" matches no channel (there are: vr/r1/state, acme/blob)`; err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
	if _, err := ParseSet([]string{"ok", "bad/"}); !errors.Is(err, ErrSyntax) {
		t.Fatal("ParseSet accepted a bad pattern")
	}
	var none *Set
	if none.Len() != 0 || none.Unmatched("x", nil) != nil {
		t.Fatal("nil Set")
	}
	many := make([]string, 30)
	for i := range many {
		many[i] = "c"
	}
	if msg := (&NoMatchError{Pattern: "p", Have: many}).Error(); !strings.HasSuffix(msg, "and 10 more)") {
		t.Fatalf("long list: %s", msg)
	}
}

func TestRemap(t *testing.T) {
	for _, c := range []struct {
		spec, in, out string
		ok            bool
	}{
		{"vr/r1/state=sim/state", "vr/r1/state", "sim/state", true},
		{"vr/r1/state=sim/state", "vr/r1/statex", "", false},
		{"vr/r2/**=x/**", "vr/r2/cam/front", "x/cam/front", true},
		{"vr/r2/**=x/**", "vr/r2", "x", true},
		{"vr/*/camera/**=cams/**", "vr/r7/camera/front", "cams/front", true},
		{"vr/*/state=all/state", "vr/r3/state", "all/state", true},
	} {
		m, err := ParseRemap(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		out, ok := m.Apply(c.in)
		if out != c.out || ok != c.ok {
			t.Errorf("%s on %s = %q %v, want %q %v", c.spec, c.in, out, ok, c.out, c.ok)
		}
	}
	for _, bad := range []string{"nope", "=x", "a=", "a/*=x/**", "**/a/**=x/**", "a=x/*", "a/**=x/**/y", "a?=b"} {
		if _, err := ParseRemap(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("vr/**/state", "vr/r1/state")
	f.Add("a/$*b$*/**", "a/xbx/c/d")
	f.Fuzz(func(t *testing.T, pat, subject string) {
		p, err := Parse(pat)
		if err != nil {
			return
		}
		got := p.Match(subject)
		if want := slowMatch(p.levels, strings.Split(subject, "/")); got != want {
			t.Fatalf("%q ~ %q: %v, the recursive definition says %v", pat, subject, got, want)
		}
	})
}

// slowMatch is the definition, recursively: the differential oracle.
func slowMatch(ls []level, parts []string) bool {
	if len(ls) == 0 {
		return len(parts) == 0
	}
	if ls[0].kind == kindAny {
		for i := 0; i <= len(parts); i++ {
			if slowMatch(ls[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	if len(parts) == 0 {
		return false
	}
	if ls[0].kind == kindOne || ls[0].match(parts[0]) {
		return slowMatch(ls[1:], parts[1:])
	}
	return false
}

func TestIsName(t *testing.T) {
	for s, want := range map[string]bool{"gpu-box": true, "ci_1": true, "": false, "a/b": false, "*": false, "a*": false, "$*": false, "**": false, "a b": true} {
		if IsName(s) != want {
			t.Errorf("IsName(%q) = %v", s, !want)
		}
	}
}
