package analyzer

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/logfmt"
)

// hostLog writes a log of one recorder host: 25 Hz states or 30 Hz frames
// for 2 s, received 1 ms after capture on a wall clock aheadNs ahead of
// the simulator's, with the monotonic clock at hostMonoOrigin; md is its
// header metadata.
func hostLog(t *testing.T, path string, frames bool, aheadNs int64, md map[string]string) {
	t.Helper()
	hostLogUntil(t, path, frames, aheadNs, md, 0)
}

// hostLogUntil is hostLog with the recorder's heartbeats, every 100 ms
// from the start to tailNs after the last sample (0: no heartbeats).
func hostLogUntil(t *testing.T, path string, frames bool, aheadNs int64, md map[string]string, tailNs int64) {
	t.Helper()
	w, err := logfmt.Create(path, logfmt.WriterOptions{Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	name, schema, period := "vr/r1/state", codec.SchemaState, int64(40e6)
	if frames {
		name, schema, period = "vr/r1/camera/front", codec.SchemaFrame, int64(33_333_333)
	}
	id, _ := w.AddChannel(logfmt.Channel{Name: name, Transport: logfmt.TransportZenoh, Topic: name, Schema: schema})
	const t0 = int64(1_764_446_400_000_000_000)
	var last int64
	for i := int64(0); i*period < 2e9; i++ {
		capture := t0 + i*period
		wall := capture + 1e6 + aheadNs
		if err := w.Write(&logfmt.Record{Channel: id, RecvWallNs: wall, RecvMonoNs: capture + 1e6 - hostMonoOrigin, CaptureNs: capture, Seq: uint64(i), HasStamp: true,
			Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		last = capture + 1e6
	}
	if tailNs > 0 {
		hb, _ := w.AddChannel(logfmt.Channel{Name: "vrlog/recorder", Transport: logfmt.TransportInternal, Topic: "vrlog/recorder", Schema: codec.SchemaHeartbeat})
		for at := t0; at <= last+tailNs; at += 100e6 {
			if err := w.Write(&logfmt.Record{Channel: hb, RecvWallNs: at + aheadNs, RecvMonoNs: at - hostMonoOrigin}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// Unmerged logs of two hosts, whose clocks differ by a known 50 ms, are
// refused (their probes would be pooled into one offset and their wall
// stamps compared for the ended outage) with hostclock's error naming both
// files; so are logs of hosts named differently, and logs on the
// simulator's and a recorder's clock. One host's logs, or one
// recording's files whatever their clocks did, are analyzed together.
func TestAnalyzeSeveralHostsRefused(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	hostLog(t, p("states.vrlog"), false, 0, map[string]string{hostclock.MetaHost: "a"})
	hostLog(t, p("frames.vrlog"), true, 0, map[string]string{hostclock.MetaHost: "a"})
	hostLog(t, p("frames-ahead.vrlog"), true, 50e6, map[string]string{hostclock.MetaHost: "a"})
	hostLog(t, p("frames-b.vrlog"), true, 0, map[string]string{hostclock.MetaHost: "b"})
	hostLog(t, p("part0.vrlog"), false, 0, map[string]string{hostclock.MetaHost: "a", hostclock.MetaRecording: "r1"})
	hostLog(t, p("part1.vrlog"), true, 50e6, map[string]string{hostclock.MetaHost: "a", hostclock.MetaRecording: "r1"})

	for _, c := range []struct {
		files []string
		want  string // "" passes
	}{
		{[]string{"states.vrlog", "frames.vrlog"}, ""},
		{[]string{"states.vrlog", "frames-ahead.vrlog"}, "differ by 50ms between their wall and monotonic clocks"},
		{[]string{"states.vrlog", "frames-b.vrlog"}, "states.vrlog on a, " + p("frames-b.vrlog") + " on b"},
		{[]string{"part0.vrlog", "part1.vrlog"}, ""},
	} {
		var paths []string
		for _, f := range c.files {
			paths = append(paths, p(f))
		}
		rep, err := AnalyzeFiles(paths, Options{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.files, err)
		case c.want == "" && (len(rep.Lag) != 1 || rep.Lag[0].Count == 0):
			t.Errorf("%v: frames not paired with the states: %+v", c.files, rep.Lag)
		case c.want != "" && (!errors.Is(err, hostclock.ErrSeveralRecorders) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want hostclock.ErrSeveralRecorders saying %q", c.files, err, c.want)
		}
	}
}

// Two recorders of one session on one host stop at their own times: each
// channel's ended silence is measured against the end of its own
// recording (its heartbeats), not the other recorder's, which went on
// 2 s longer; a channel that stopped 2 s before its own recorder did is
// an ended outage.
func TestEndedAgainstItsOwnRecording(t *testing.T) {
	dir := t.TempDir()
	states, frames := filepath.Join(dir, "states.vrlog"), filepath.Join(dir, "frames.vrlog")
	hostLogUntil(t, states, false, 0, map[string]string{hostclock.MetaHost: "a", hostclock.MetaRecording: "s"}, 20e6)
	hostLogUntil(t, frames, true, 0, map[string]string{hostclock.MetaHost: "a", hostclock.MetaRecording: "f"}, 2e9)
	rep, err := AnalyzeFiles([]string{states, frames}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, ended := range map[string]bool{"vr/r1/state": false, "vr/r1/camera/front": true} {
		c := rep.Channel(name)
		got := false
		for _, o := range c.Outages {
			got = got || o.Ended && o.GapS > 1.9 && o.GapS < 2.1
		}
		if got != ended || len(c.Outages) != map[bool]int{false: 0, true: 1}[ended] {
			t.Errorf("%s: outages %+v, want an ended one: %v", name, c.Outages, ended)
		}
	}
}
