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
