package replay

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vrlog/vrlog/replayer"
)

func TestSummaryPlurals(t *testing.T) {
	for _, c := range []struct {
		n    uint64
		noun string
		want string
	}{{1, "record", "1 record"}, {0, "record", "0 records"}, {2, "channel", "2 channels"}, {1, "pass", "1 pass"}, {3, "pass", "3 passes"}} {
		if got := plural(c.n, c.noun); got != c.want {
			t.Errorf("plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}

// The summary fits an 80-column terminal: no line wider, so none wraps
// mid-number ("2" / ".6µs"); off a terminal (0) the table is one group.
func TestSummaryFitsTheTerminal(t *testing.T) {
	long := "vr/r1/camera/front_left"
	te := replayer.TimingError{Count: 10, P50: 2600, P99: 123456, Max: 9876543}
	r := &replayer.Report{Rate: 1.0, Clock: "receive", Passes: 1, ElapsedS: 1.050545,
		Lockstep: &replayer.LockstepReport{Key: "ci/vr/robot-with-a-long-name/cmd", TimeoutS: 1, Answered: 282, Late: 3},
		Channels: []replayer.ChannelReport{{Name: long, Transport: "iceoryx2", Topic: "ci/" + long, Sent: 123456, TimingError: te}},
		Total:    replayer.ChannelReport{Name: "total", Sent: 123456, TimingError: te}}
	var b strings.Builder
	if err := writeText(&b, r, 80); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if utf8.RuneCountInString(l) > 80 {
			t.Errorf("%d columns: %q", utf8.RuneCountInString(l), l)
		}
	}
	if !strings.Contains(b.String(), "9.8765ms") || !strings.Contains(b.String(), "2.6µs") {
		t.Fatalf("a figure was cut:\n%s", b.String())
	}
	b.Reset()
	writeText(&b, r, 0)
	if n := strings.Count(b.String(), "CHANNEL"); n != 1 {
		t.Fatalf("off a terminal: %d headers\n%s", n, b.String())
	}
}
