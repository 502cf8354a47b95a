package analyzer

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
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

// cutSnapshot writes the records of the log at src received (wall) in
// [from, to] to dst as a snapshot of recording rec, as record --snapshot
// would, with the session epoch.
func cutSnapshot(t *testing.T, src, dst, rec string, from, to, epoch int64) {
	t.Helper()
	recs, chans, _ := readRecords(t, src, func(r *logfmt.Record, _ logfmt.Channel) bool { return r.RecvWallNs >= from && r.RecvWallNs <= to })
	lo, hi := recs[0].RecvMonoNs, recs[0].RecvMonoNs
	for _, r := range recs {
		lo, hi = min(lo, r.RecvMonoNs), max(hi, r.RecvMonoNs)
	}
	md := map[string]string{}
	(&logfmt.Snapshot{Triggers: []logfmt.SnapshotTrigger{{Cause: "signal SIGUSR1", WallNs: to - 1e9, MonoNs: hi - 1e9}}, TriggerCount: 1,
		Before: time.Duration(to-from) - time.Second, After: time.Second, FromWallNs: from, ToWallNs: to, FromMonoNs: lo, ToMonoNs: hi,
		Recording: rec, SessionEpochNs: epoch, HasSessionEpoch: true}).AddTo(md)
	writeRecords(t, dst, md, chans, recs)
}

// dropInside removes the state of seq from the snapshot at path (a seq
// gap inside its window).
func dropInside(t *testing.T, path string, seq uint64) {
	t.Helper()
	recs, chans, md := readRecords(t, path, func(r *logfmt.Record, c logfmt.Channel) bool {
		return !(c.Schema == codec.SchemaState && r.HasStamp && r.Seq == seq)
	})
	writeRecords(t, path, md, chans, recs)
}

// readRecords reads the records of the log at path that keep takes, with
// its channels and metadata.
func readRecords(t *testing.T, path string, keep func(*logfmt.Record, logfmt.Channel) bool) ([]logfmt.Record, []logfmt.Channel, map[string]string) {
	t.Helper()
	r, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	chans := r.Channels()
	var recs []logfmt.Record
	it := r.Records(logfmt.Filter{})
	for it.Next() {
		rc := *it.Record()
		if !keep(&rc, chans[rc.Channel-1]) {
			continue
		}
		rc.Header, rc.Payload, rc.PublisherID = append([]byte(nil), rc.Header...), append([]byte(nil), rc.Payload...), append([]byte(nil), rc.PublisherID...)
		recs = append(recs, rc)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return recs, chans, r.Header().Metadata
}

// writeRecords writes a log of recs at path.
func writeRecords(t *testing.T, path string, md map[string]string, chans []logfmt.Channel, recs []logfmt.Record) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := logfmt.NewWriter(f, logfmt.WriterOptions{Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chans {
		if _, err := w.AddChannel(c); err != nil {
			t.Fatal(err)
		}
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// Several snapshots of one recording read as one: the time between them
// was not captured, so the faults there (a seq gap, a publisher restart
// and its outage) are none of the report's, while those inside the
// windows are all there; the rate is that of the captured time, elapsed
// counts from the recording's epoch, and no gate fails on the gap.
func TestSnapshotsOfOneRecording(t *testing.T) {
	cfg := synth.Default()
	cfg.Duration, cfg.StateHz, cfg.RawHz, cfg.GarbageStates, cfg.RecorderDrops = 60*time.Second, 100, 0, 0, 0
	cfg.DropStates = []uint64{300, 2000}                      // at 3 s (inside the first window), at 20 s (between)
	cfg.DropFrames = []uint64{}                               // frames: none
	cfg.RestartAt, cfg.Outage = 25*time.Second, 2*time.Second // between: seq back to 0 at 27 s
	dir := t.TempDir()
	whole, tr := writeSession(t, cfg)
	start := cfg.Start.UnixNano()
	a, b := filepath.Join(dir, "bug_a.vrlog"), filepath.Join(dir, "bug_b.vrlog")
	cutSnapshot(t, whole, a, "rec1", start+2e9, start+12e9, tr.EpochNs)
	// the second window: 40 s .. 55 s, with a seq gap of its own at 44 s
	// (seq 1700 after the restart at 27 s)
	cutSnapshot(t, whole, b, "rec1", start+40e9, start+55e9, tr.EpochNs)
	dropInside(t, b, 1700)
	rep, err := AnalyzeFiles([]string{a, b}, Options{PlotBins: 100})
	if err != nil {
		t.Fatal(err)
	}
	st := rep.Channel("vr/r1/state")
	if st.Skipped != 2 || st.SkipEvents != 2 || st.RestartCount != 0 || len(st.Outages) != 0 {
		t.Fatalf("state: %d skipped in %d gaps, %d restarts, outages %+v: want exactly the two gaps inside the windows",
			st.Skipped, st.SkipEvents, st.RestartCount, st.Outages)
	}
	if f := rep.Channel("vr/r1/camera/front"); f.Skipped != 0 || f.RestartCount != 0 || len(f.Outages) != 0 {
		t.Fatalf("frames: %+v", f)
	}
	if st.RateHz < 99 || st.RateHz > 101 {
		t.Fatalf("state rate %.3f Hz, want 100 (of the captured time)", st.RateHz)
	}
	if len(rep.NotCaptured) != 1 || rep.NotCaptured[0].GapS < 27.9 || rep.NotCaptured[0].GapS > 28.1 || rep.EpochNs != tr.EpochNs {
		t.Fatalf("not captured %+v, epoch %d (want %d)", rep.NotCaptured, rep.EpochNs, tr.EpochNs)
	}
	if err := rep.ApplyChecks(Thresholds{MaxSkips: []Limit{{Value: 2}}, MaxRestarts: []Limit{{Value: 0}}, MaxOutageMs: []Limit{{Value: 500}},
		MinRate: limits(t, false, "29", "vr/r1/state=95"), MaxLagMs: []Limit{{Value: 50}}}); err != nil {
		t.Fatal(err)
	}
	if !rep.Pass {
		t.Fatalf("gates failed: %+v", rep.Failed())
	}
	// The HTML report: a visible block per snapshot, the triggers and the
	// time between in Events, that time blank on the timeline, and the
	// trigger lines under the lanes' markers.
	an := New(Options{PlotBins: 100})
	if err := an.Plan([]string{a, b}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{a, b} {
		if err := an.AddFile(p); err != nil {
			t.Fatal(err)
		}
	}
	var html bytes.Buffer
	if err := an.WriteHTML(&html, an.Report()); err != nil {
		t.Fatal(err)
	}
	h := html.String()
	if strings.Count(h, `<p class="snapshot">Snapshot `) != 2 || strings.Count(h, `<tr class="trigger">`) != 2 || strings.Count(h, `<tr class="not captured">`) != 1 ||
		strings.Count(h, `<rect class="uncaptured"`) != 1 || strings.Index(h, `<line class="trigger"`) > strings.Index(h, `<g class="lane"`) {
		t.Fatalf("HTML: snapshot blocks %d, trigger events %d, not-captured events %d, blank spans %d, trigger before lanes %v",
			strings.Count(h, `<p class="snapshot">`), strings.Count(h, `<tr class="trigger">`), strings.Count(h, `<tr class="not captured">`),
			strings.Count(h, `<rect class="uncaptured"`), strings.Index(h, `<line class="trigger"`) < strings.Index(h, `<g class="lane"`))
	}
	textClear(t, h)
	// A gap under the lanes' facts (right-aligned): its label stays clear.
	c, d := filepath.Join(dir, "bug_c.vrlog"), filepath.Join(dir, "bug_d.vrlog")
	cutSnapshot(t, whole, c, "rec1", start+2e9, start+40e9, tr.EpochNs)
	cutSnapshot(t, whole, d, "rec1", start+52e9, start+55e9, tr.EpochNs)
	an = New(Options{PlotBins: 100})
	if err := an.Plan([]string{c, d}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{c, d} {
		if err := an.AddFile(p); err != nil {
			t.Fatal(err)
		}
	}
	html.Reset()
	if err := an.WriteHTML(&html, an.Report()); err != nil {
		t.Fatal(err)
	}
	textClear(t, html.String())
}

// textClear renders an HTML report in headless Chromium and fails if any
// two texts of its timeline overlap (a "not captured" label on a lane's
// name or facts, as a stranger saw).
func textClear(t *testing.T, page string) {
	t.Helper()
	chromium(t)
	const probe = `<script>(function () {
  const ts = Array.from(document.querySelectorAll('svg[data-plot=timeline] text')).map(e => [e.textContent, e.getBoundingClientRect()]);
  const hit = [];
  for (let i = 0; i < ts.length; i++) for (let j = i + 1; j < ts.length; j++) {
    const a = ts[i][1], b = ts[j][1];
    if (a.width > 0 && b.width > 0 && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) hit.push(ts[i][0] + ' / ' + ts[j][0]);
  }
  const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify({texts: ts.length, overlaps: hit}); document.body.appendChild(pre);
})();</script></body>`
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, []byte(strings.Replace(page, "</body>", probe, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<pre id="probe">(.*?)</pre>`).FindSubmatch(headless(t, path, 900, "--dump-dom"))
	if m == nil {
		t.Fatal("the probe left no result")
	}
	var r struct {
		Texts    int
		Overlaps []string
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &r); err != nil {
		t.Fatal(err)
	}
	if r.Texts < 4 || len(r.Overlaps) > 0 {
		t.Fatalf("timeline: %d texts, overlapping: %q", r.Texts, r.Overlaps)
	}
}

// The files of one recording are read in time order, whatever the order
// given: split at 3 s and given back to front, the sample reads as it
// does whole, with no restart at the seam.
func TestFilesInTimeOrder(t *testing.T) {
	dir := t.TempDir()
	recs, chans, md := readRecords(t, sampleLog, func(*logfmt.Record, logfmt.Channel) bool { return true })
	seam := recs[0].RecvWallNs + 3e9
	var head, tail []logfmt.Record
	for _, r := range recs {
		if r.RecvWallNs < seam {
			head = append(head, r)
		} else {
			tail = append(tail, r)
		}
	}
	a, b := filepath.Join(dir, "a.vrlog"), filepath.Join(dir, "b.vrlog")
	writeRecords(t, a, md, chans, head)
	writeRecords(t, b, md, chans, tail)
	whole, err := AnalyzeFiles([]string{sampleLog}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := AnalyzeFiles([]string{b, a}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files[0].Path != a || rep.Files[1].Path != b {
		t.Fatalf("files read as %s, %s: want a, then b", rep.Files[0].Path, rep.Files[1].Path)
	}
	for _, c := range whole.Channels {
		got := rep.Channel(c.Name)
		if got.Count != c.Count || got.RestartCount != c.RestartCount || got.Skipped != c.Skipped || len(got.Outages) != len(c.Outages) {
			t.Fatalf("%s: %d samples, %d restarts, %d skipped, %d outages; whole: %d, %d, %d, %d", c.Name,
				got.Count, got.RestartCount, got.Skipped, len(got.Outages), c.Count, c.RestartCount, c.Skipped, len(c.Outages))
		}
	}
}

// A journal of a window the recorder did not finish (kill -9; recovered)
// says the window asked when its trigger fired, wider than its records:
// the window read is its records', so it neither overlaps the snapshot
// before it nor hides the time between, and no fault is invented there.
func TestJournalWindowIsItsRecords(t *testing.T) {
	cfg := synth.Default()
	cfg.Duration, cfg.StateHz, cfg.RawHz, cfg.GarbageStates, cfg.RecorderDrops = 60*time.Second, 100, 0, 0, 0
	cfg.DropStates, cfg.DropFrames = []uint64{}, []uint64{}
	cfg.RestartAt, cfg.Outage = 50*time.Second, time.Second // after both windows
	dir := t.TempDir()
	whole, tr := writeSession(t, cfg)
	start := cfg.Start.UnixNano()
	a, b := filepath.Join(dir, "bug_a.vrlog"), filepath.Join(dir, "bug_b.vrlog")
	cutSnapshot(t, whole, a, "rec1", start+2e9, start+12e9, tr.EpochNs)
	cutSnapshot(t, whole, b, "rec1", start+40e9, start+45e9, tr.EpochNs)
	recs, chans, md := readRecords(t, b, func(*logfmt.Record, logfmt.Channel) bool { return true })
	s, err := logfmt.ParseSnapshot(md)
	if err != nil || s == nil {
		t.Fatal(s, err)
	}
	s.FromMonoNs, s.FromWallNs = s.FromMonoNs-30e9, s.FromWallNs-30e9 // asked: 30 s before a trigger at 45 s
	s.ToMonoNs, s.ToWallNs = s.ToMonoNs+5e9, s.ToWallNs+5e9
	md2 := map[string]string{}
	s.AddTo(md2)
	writeRecords(t, b, md2, chans, recs)
	rep, err := AnalyzeFiles([]string{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := rep.Channel("vr/r1/state")
	if st.Skipped != 0 || st.RestartCount != 0 || len(st.Outages) != 0 || len(rep.NotCaptured) != 1 || rep.NotCaptured[0].GapS < 27.9 {
		t.Fatalf("state: %d skipped, %d restarts, %d outages; not captured %+v: want nothing but the 28 s between", st.Skipped, st.RestartCount, len(st.Outages), rep.NotCaptured)
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "overlaps") {
			t.Fatalf("note %q: the files do not overlap", n)
		}
	}
}
