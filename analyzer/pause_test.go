package analyzer

import (
	"bytes"
	"encoding/csv"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// pausedLog writes a recording of a 100 Hz state stream paused from 1 s
// to 2 s (the recorder's pause record at the resume; the states received
// meanwhile not written), as the recorder writes one.
func pausedLog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "paused.vrlog")
	w, err := logfmt.Create(path, logfmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState})
	pa, _ := w.AddChannel(logfmt.Channel{Name: "vrlog/pause", Transport: logfmt.TransportInternal, Topic: "vrlog/pause", Schema: codec.SchemaPause})
	const t0, ms = int64(1.7e18), int64(1e6)
	for i := int64(0); i < 300; i++ {
		if i >= 100 && i < 200 {
			continue // paused
		}
		s := codec.State{Seq: uint64(i), TNs: t0 + i*10*ms, Sensors: []codec.Sensor{}}
		rec := logfmt.Record{Channel: st, RecvMonoNs: 1e9 + i*10*ms, RecvWallNs: t0 + i*10*ms + ms, Payload: codec.AppendState(nil, &s),
			Seq: s.Seq, CaptureNs: s.TNs, HasStamp: true}
		if i == 200 {
			p := codec.Pause{FromWallNs: t0 + 1000*ms, FromMonoNs: 1e9 + 1000*ms, ToWallNs: t0 + 2000*ms - ms, ToMonoNs: 1e9 + 2000*ms - ms, Unwritten: map[string]uint64{"vr/r1/state": 100}}
			if err := w.Write(&logfmt.Record{Channel: pa, RecvMonoNs: p.ToMonoNs, RecvWallNs: p.ToWallNs, Payload: codec.AppendPause(nil, &p)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// A paused recording analyzes as one: the pause is not captured, no skip
// or outage counts it, and the CSV holds every record, read across the
// pause as the report was.
func TestPausedRecording(t *testing.T) {
	a := New(Options{})
	if err := a.AddFile(pausedLog(t)); err != nil {
		t.Fatal(err)
	}
	rep := a.Report()
	if len(rep.NotCaptured) != 1 || rep.NotCaptured[0].Why != "paused" || rep.NotCaptured[0].Unwritten != 100 || rep.NotCaptured[0].GapS != 1.01 {
		t.Fatalf("not captured %+v", rep.NotCaptured)
	}
	c := rep.Channels[0]
	if c.Name != "vr/r1/state" || c.Count != 200 || c.Skipped != 0 || len(c.Outages) != 0 {
		t.Fatalf("%s: %d records, %d skipped, outages %v", c.Name, c.Count, c.Skipped, c.Outages)
	}
	var b bytes.Buffer
	if err := a.WriteCSV(&b, rep, codec.TimeElapsed); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+200 {
		t.Fatalf("%d CSV rows, want 200", len(rows)-1)
	}
	for _, r := range rows[1:] {
		if strings.Contains(r[9], "skip") || strings.Contains(r[9], "outage") {
			t.Fatalf("row %v: the pause counted", r)
		}
	}
}

// A merge of two recorders of which one was paused: the pause breaks only
// that recorder's channels (the merge keeps each recorder's pause channel
// apart and says which channels each paused), so the report is the
// paused recorder's own, and the other's stream runs through it. Without
// the scope the gap shrank to the longest silence of any channel (0.005 s
// of a 1.01 s pause here; 0.033 s of 2.760 s in a stranger's run).
func TestPauseOfOneRecorderInAMerge(t *testing.T) {
	other := filepath.Join(t.TempDir(), "other.vrlog")
	w, err := logfmt.Create(other, logfmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := w.AddChannel(logfmt.Channel{Name: "vr/r2/state", Transport: logfmt.TransportZenoh, Topic: "vr/r2/state", Schema: codec.SchemaState})
	// The camera of robot r1, whose states the paused recorder kept.
	cam, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/camera/front", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/camera/front", Schema: codec.SchemaFrame})
	const t0, ms = int64(1.7e18), int64(1e6)
	for i := int64(0); i < 300; i++ {
		s := codec.State{Seq: uint64(i), TNs: t0 + i*10*ms + 5*ms, Sensors: []codec.Sensor{}}
		if err := w.Write(&logfmt.Record{Channel: st, RecvMonoNs: 1e9 + i*10*ms + 5*ms, RecvWallNs: t0 + i*10*ms + 6*ms,
			Payload: codec.AppendState(nil, &s), Seq: s.Seq, CaptureNs: s.TNs, HasStamp: true}); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 { // 33 Hz, each frame captured with a state of r1 and received 2 ms later
			h := codec.NewFrameHeader(uint64(i/3), t0+i*10*ms, 1, 4, 4, codec.RGB8)
			if err := w.Write(&logfmt.Record{Channel: cam, RecvMonoNs: 1e9 + i*10*ms + 2*ms, RecvWallNs: t0 + i*10*ms + 2*ms,
				Header: codec.AppendFrameHeader(nil, &h), Payload: make([]byte, 48), Seq: uint64(i / 3), CaptureNs: t0 + i*10*ms, HasStamp: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var rs []*logfmt.Reader
	for _, p := range []string{other, pausedLog(t)} {
		r, err := logfmt.Open(p, logfmt.ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		rs = append(rs, r)
	}
	plan, err := logfmt.PlanMerge(rs, logfmt.MergeOptions{Apart: IsPause})
	if err != nil {
		t.Fatal(err)
	}
	merged := filepath.Join(t.TempDir(), "merged.vrlog")
	mw, err := logfmt.Create(merged, logfmt.WriterOptions{Metadata: map[string]string{MetaPauseScope: PauseScope(rs, plan)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Copy(mw); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	a := New(Options{})
	if err := a.AddFile(merged); err != nil {
		t.Fatal(err)
	}
	rep := a.Report()
	if len(rep.NotCaptured) != 1 || rep.NotCaptured[0].Why != "paused" || rep.NotCaptured[0].Unwritten != 100 || rep.NotCaptured[0].GapS != 1.01 {
		t.Fatalf("not captured %+v", rep.NotCaptured)
	}
	// The frames captured while r1's states were not: paired with none,
	// not with the state before the pause (1 s old at its end).
	if len(rep.Lag) != 1 || rep.Lag[0].AcrossOutage != 0 || rep.Lag[0].LatestMs.Max > 1 ||
		rep.Lag[0].Count != 100 || rep.Lag[0].Unpaired != 33 || rep.Lag[0].LatestMs.Count != 67 {
		t.Fatalf("lag %+v", rep.Lag)
	}
	for name, want := range map[string]uint64{"vr/r1/state": 200, "vr/r2/state": 300, "vr/r1/camera/front": 100} {
		c := rep.Channel(name)
		if c == nil || c.Count != want || c.Skipped != 0 || len(c.Outages) != 0 {
			t.Fatalf("%s: %+v, want %d records, no skip, no outage", name, c, want)
		}
	}
	var b bytes.Buffer
	if err := a.WriteCSV(&b, rep, codec.TimeElapsed); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 1+600 {
		t.Fatalf("%d CSV rows (%v), want 600", len(rows)-1, err)
	}
	for _, r := range rows[1:] {
		if strings.Contains(r[9], "skip") || strings.Contains(r[9], "outage") {
			t.Fatalf("row %v: the pause counted", r)
		}
	}
}
