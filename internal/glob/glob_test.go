package glob

import "testing"

func TestCompile(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{"vr/*/state", "vr/r1/state", true}, {"vr/*/state", "vr/a/b/state", false},
		{"vr/**", "vr/r1/camera/front", true}, {"vr/r?/state", "vr/r1/state", true},
		{"a.b", "axb", false}, {"vr/r1/state", "vr/r1/state", true}, {"**", "", true},
	} {
		if got := Compile(c.pat).MatchString(c.s); got != c.want {
			t.Errorf("%q ~ %q = %v", c.pat, c.s, got)
		}
	}
}
