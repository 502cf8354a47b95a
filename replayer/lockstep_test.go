package replayer

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
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

// The Go library's defaults mean what the flags' do: MaxMissedInARow 0 is
// no limit, as --max-missed-in-a-row 0 (it was "3" in Go), a negative is
// refused; a nil Warn writes the warnings to stderr (it hid them all).
func TestConfigDefaultsAsTheFlags(t *testing.T) {
	c, _, err := check(Config{Files: []string{"x.vrlog"}, Lockstep: "vr/r1/cmd"})
	if err != nil || c.MaxMissedInARow != 0 || c.MaxMissed != 0 || c.Warn != os.Stderr {
		t.Fatalf("%v: max missed in a row %d, warn %v", err, c.MaxMissedInARow, c.Warn)
	}
	var ce *ConfigError
	if _, _, err := check(Config{Files: []string{"x.vrlog"}, Lockstep: "vr/r1/cmd", MaxMissedInARow: -1}); !errors.As(err, &ce) || ce.Field != "MaxMissedInARow" {
		t.Fatalf("negative: %v", err)
	}
}

// The report's seconds are to the microsecond (elapsed_s printed
// 1.0505454379999999).
func TestReportSecondsToTheMicrosecond(t *testing.T) {
	b, _ := json.Marshal(Report{ElapsedS: sec(1.0505454379999999), StartOffsetS: sec(0.1 + 0.2)})
	if s := string(b); !strings.Contains(s, `"elapsed_s":1.050545,`) || !strings.Contains(s, `"start_offset_s":0.3,`) {
		t.Fatalf("%s", s)
	}
}
