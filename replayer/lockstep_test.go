package replayer

import (
	"testing"

	"github.com/vrlog/vrlog/keyexpr"
)

// Lockstep takes its answers from the capture when the capture takes in
// every key the lockstep pattern matches.
func TestLockstepCaptured(t *testing.T) {
	ps := func(ss ...string) (out []keyexpr.Pattern) {
		for _, s := range ss {
			out = append(out, keyexpr.MustParse(s))
		}
		return out
	}
	for _, c := range []struct {
		lockstep string
		capture  []keyexpr.Pattern
		want     bool
	}{
		{"vr/r1/cmd", ps("vr/r1/cmd"), true},
		{"vr/r1/cmd", ps("vr/*/cmd"), true},
		{"vr/*/cmd", ps("vr/*/cmd", "x"), true},
		{"vr/*/cmd", ps("vr/r1/cmd"), false},
		{"vr/r1/ack", ps("vr/r1/cmd"), false},
		{"vr/r1/cmd", nil, false},
	} {
		if got := captured(keyexpr.MustParse(c.lockstep), c.capture); got != c.want {
			t.Errorf("lockstep %s, capture %v: %v", c.lockstep, c.capture, got)
		}
	}
}
