package analyzer

import (
	"math"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/internal/synth"
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

// Watched live over a log's records, the triggers fire on exactly the
// channels whose checks analyze fails on the whole log, and the largest
// value a trigger fired with is the value analyze's check measured.
// On the sample, frames paired across the restart's and the pause's state
// outages are no lag live either: max-lag=50ms fires up to analyze's
// 78.667 ms (a skipped state), max-lag=100ms not at all.
func TestWatchAgreesWithChecks(t *testing.T) {
	p, _ := writeSession(t, synth.Default())
	watchAgrees(t, p, 3, "max-skips=0", "max-restarts=0", "max-outage=1s", "max-lag=12ms", "max-lag=vr/r1/camera/*=11ms")
	watchAgrees(t, "../testdata/sample.vrlog", 1, "max-lag=50ms")
	watchAgrees(t, "../testdata/sample.vrlog", 0, "max-lag=100ms")
}

// watchAgrees watches the log at p with the trigger specs and compares
// what fired with the checks analyze fails (at least minFailed).
func watchAgrees(t *testing.T, p string, minFailed int, specs ...string) {
	t.Helper()
	var trigs []Trigger
	for _, s := range specs {
		tr, err := ParseTrigger(s)
		if err != nil {
			t.Fatal(err)
		}
		trigs = append(trigs, tr)
	}
	rep, err := AnalyzeFiles([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	th := Thresholds{}
	for _, tr := range trigs {
		switch tr.Check {
		case "max-skips":
			th.MaxSkips = append(th.MaxSkips, tr.Limit)
		case "max-restarts":
			th.MaxRestarts = append(th.MaxRestarts, tr.Limit)
		case "max-outage":
			th.MaxOutageMs = append(th.MaxOutageMs, tr.Limit)
		case "max-lag":
			th.MaxLagMs = append(th.MaxLagMs, tr.Limit)
		}
	}
	if err := rep.ApplyChecks(th); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, c := range rep.Failed() {
		want[c.Name+" "+c.Channel] = c.Value
	}

	r, err := logfmt.Open(p, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	chans := map[uint16]*logfmt.Channel{}
	for _, c := range r.Channels() {
		chans[c.ID] = &c
	}
	w := NewWatch(trigs, 0)
	got := map[string]float64{}
	it := r.Records(logfmt.Filter{MetaOnly: true})
	for it.Next() {
		for _, f := range w.Record(chans[it.Record().Channel], it.Record()) {
			k := f.Check + " " + f.Channel
			got[k] = math.Max(got[k], f.Value)
			if !strings.HasPrefix(f.Message, f.Check+" "+f.Channel+": ") || !strings.Contains(f.Message, "off by") || f.CaptureNs == 0 {
				t.Fatalf("fired %+v", f)
			}
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(want) < minFailed {
		t.Fatalf("fired %v; analyze failed %v", got, want)
	}
	for k, v := range want {
		if math.Abs(got[k]-v) > 1e-9 {
			t.Errorf("%s: fired up to %v, analyze measured %v", k, got[k], v)
		}
	}
	if u := w.Unwatched(); len(u) != 0 {
		t.Fatalf("unwatched: %v", u)
	}
	t.Logf("fired as analyze failed: %v", got)
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
