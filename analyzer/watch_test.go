package analyzer

import (
	"math"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/livecheck"
	"github.com/vrlog/vrlog/logfmt"
)

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
	var trigs []livecheck.Trigger
	for _, s := range specs {
		tr, err := livecheck.ParseTrigger(s)
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
	w := livecheck.NewWatch(trigs, 0)
	got := map[string]float64{}
	it := r.Records(logfmt.Filter{MetaOnly: true})
	for it.Next() {
		// The recorder's drops (a synth session's, its frames from
		// synth.RecorderDropFrom on) are told to the watch at the record
		// after their gap, as the recorder tells it: no publisher skip.
		var lost uint64
		if d := r.StatsOf(it.Record().Channel).Drops; d > 0 && it.Record().Seq == synth.RecorderDropFrom+d {
			lost = d
		}
		for _, f := range w.Record(chans[it.Record().Channel], it.Record(), lost) {
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
