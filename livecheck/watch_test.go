package livecheck

import (
	"strings"
	"testing"

	"github.com/vrlog/vrlog/logfmt"
)

func TestParseTrigger(t *testing.T) {
	for _, c := range []struct{ in, check, channel, err string }{
		{in: "max-restarts=0", check: "max-restarts"},
		{in: "max-outage=vr/r1/state=200ms", check: "max-outage", channel: "vr/r1/state"},
		{in: "max-lag=vr/*/camera/*=45ms", check: "max-lag", channel: "vr/*/camera/*"},
		{in: "max-skips", err: "want CHECK=[CHANNEL=]VALUE"},
		{in: "min-rate=24", err: "not decided sample by sample"},
		{in: "max-lag-reject=0.1", err: "not decided sample by sample"},
		{in: "max-drops=0", err: `unknown check "max-drops"`},
		{in: "max-outage=200", err: "want a duration"},
		{in: "max-skips=cam*=0", err: "cam$*"},
	} {
		tr, err := ParseTrigger(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || tr.Check != c.check || tr.Limit.Channel != c.channel || tr.String() != c.in {
			t.Errorf("%s: %+v (%s), %v", c.in, tr, tr, err)
		}
	}
}

// A trigger that applies to no recorded channel says so.
func TestWatchUnwatched(t *testing.T) {
	var trigs []Trigger
	for _, s := range []string{"max-lag=45ms", "max-skips=vr/r9/**=0", "max-outage=1s"} {
		tr, _ := ParseTrigger(s)
		trigs = append(trigs, tr)
	}
	w := NewWatch(trigs, 0)
	c := &logfmt.Channel{Name: "vr/r1/state", Topic: "vr/r1/state", Schema: "vrsdk.State/1"}
	w.Record(c, &logfmt.Record{HasStamp: true, Seq: 1, CaptureNs: 5, RecvMonoNs: 6})
	u := strings.Join(w.Unwatched(), "\n")
	if !strings.Contains(u, "--trigger max-lag=45ms watched nothing: the recording has no frame channel paired") ||
		!strings.Contains(u, `--trigger max-skips=vr/r9/**=0: "vr/r9/**" matches no channel with seq stamps (there are: vr/r1/state)`) ||
		strings.Contains(u, "max-outage") {
		t.Fatalf("unwatched:\n%s", u)
	}
}
