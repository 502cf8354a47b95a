package analyzer

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
)

// A snapshot's trigger is in the report (JSON fields, a text line) and on
// the HTML timeline, on the elapsed scale of the session.
func TestSnapshotReport(t *testing.T) {
	cfg := synth.Default()
	trig := cfg.Start.Add(21770 * time.Millisecond).UnixNano() // the restart's first sample
	md := map[string]string{}
	(&logfmt.Snapshot{Triggers: []logfmt.SnapshotTrigger{
		{Cause: "max-restarts vr/r1/state: 1 (limit ≤ 0): off by 1", WallNs: trig + 1e6, MonoNs: 50e9, CaptureNs: trig},
		{Cause: "signal SIGUSR1", WallNs: trig + 2e9, MonoNs: 52e9}},
		TriggerCount: 2, Before: 20 * time.Second, After: 3 * time.Second, FromWallNs: trig - 20e9, ToWallNs: trig + 5e9,
		FromMonoNs: 30e9, ToMonoNs: 55e9}).AddTo(md)
	p := filepath.Join(t.TempDir(), "snap.vrlog")
	if _, err := synth.WriteFile(p, cfg, logfmt.WriterOptions{Metadata: md}); err != nil {
		t.Fatal(err)
	}
	a := New(Options{PlotBins: 100})
	if err := a.AddFile(p); err != nil {
		t.Fatal(err)
	}
	rep := a.Report()
	if len(rep.Snapshots) != 1 {
		t.Fatalf("snapshots %+v", rep.Snapshots)
	}
	s := rep.Snapshots[0]
	if s.File != p || s.Cause != "max-restarts vr/r1/state: 1 (limit ≤ 0): off by 1" || s.TriggerElapsed != 21.77 ||
		s.BeforeS != 20 || s.AfterS != 3 || len(s.Triggers) != 2 || s.Triggers[1].CaptureNs != 0 {
		t.Fatalf("snapshot %+v", s)
	}
	// The signal has no capture stamp: its recorder time, moved by the
	// clock offset (the simulator's clock is 0.25 ms behind).
	if e := s.Triggers[1].Elapsed; e < 23.769 || e > 23.771 {
		t.Fatalf("the signal at elapsed %v, want 23.770", e)
	}
	var txt, html bytes.Buffer
	rep.WriteText(&txt, codec.TimeElapsed)
	if !strings.Contains(txt.String(), "snapshot "+p+": triggered by max-restarts vr/r1/state: 1 (limit ≤ 0): off by 1 at 21.770 s; window 20s before, 3s after") ||
		!strings.Contains(txt.String(), "extended by signal SIGUSR1 at 23.770 s") {
		t.Fatalf("text:\n%s", txt.String())
	}
	if err := a.WriteHTML(&html, rep); err != nil {
		t.Fatal(err)
	}
	// Two triggers, each a line across the timeline's lanes.
	if n := strings.Count(html.String(), `<line class="trigger"`); n != 2 || !strings.Contains(html.String(), `data-at="21.770"`) {
		t.Fatalf("HTML: %d trigger marks", n)
	}
}
