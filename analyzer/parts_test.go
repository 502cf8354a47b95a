package analyzer

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
)

// analyzed is an analysis of paths: its report as JSON, text and
// HTML (plots), and the analysis.
func analyzed(t testing.TB, paths []string, opts Options) (js, txt, html []byte, a *Analysis) {
	t.Helper()
	opts.PlotBins = 600
	a = New(opts)
	if err := a.Plan(paths); err != nil {
		t.Fatal(err)
	}
	for _, p := range a.Files() {
		if err := a.AddFile(p); err != nil {
			t.Fatal(err)
		}
	}
	rep := a.Report()
	js, _ = json.Marshal(rep)
	var b, h bytes.Buffer
	rep.WriteText(&b, codec.TimeElapsed)
	if err := a.WriteHTML(&h, rep); err != nil {
		t.Fatal(err)
	}
	return js, b.Bytes(), h.Bytes(), a
}

// sameReport fails unless two analyses' reports are byte-identical.
func sameReport(t *testing.T, what string, js, txt, html, js2, txt2, html2 []byte) {
	t.Helper()
	switch {
	case !bytes.Equal(js, js2):
		i := 0
		for i < min(len(js), len(js2)) && js[i] == js2[i] {
			i++
		}
		from := max(i-300, 0)
		t.Fatalf("%s: JSON reports differ at byte %d:\n…%s\n…%s", what, i, js[from:min(i+200, len(js))], js2[from:min(i+200, len(js2))])
	case !bytes.Equal(txt, txt2):
		t.Fatalf("%s: text reports differ:\n%s\n%s", what, txt, txt2)
	case !bytes.Equal(html, html2):
		t.Fatalf("%s: HTML reports differ", what)
	}
}

// A log read in parts, whose books are merged at the seams, gives the
// report of reading it in one, byte for byte, plots included: on logs
// with seq gaps, a publisher restart, an outage, undecodable records,
// raw channels, frames delayed by 14 ms or by 15 s, and frames out of
// order beyond the pairing window; on the metadata path and with
// --full-decode. Where a seam does not merge (frames far behind their
// states, or beyond the window) the rest is read again after it, and
// still the report is the one read's.
func TestPartsMergeToOneRead(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and analyzes logs of 100 k records")
	}
	dir := t.TempDir()
	faults := synth.Default()
	faults.StateHz, faults.FrameHz, faults.Duration, faults.RawHz = 1000, 30, 60*time.Second, 50
	logs := map[string]string{"faults": filepath.Join(dir, "faults.vrlog"), "delayed": filepath.Join(dir, "delayed.vrlog"),
		"far behind": filepath.Join(dir, "behind.vrlog"), "late": filepath.Join(dir, "late.vrlog")}
	if _, err := synth.WriteFile(logs["faults"], faults, logfmt.WriterOptions{ChunkSize: 64 << 10}); err != nil {
		t.Fatal(err)
	}
	longLog{states: 100_000, frameDelay: 14 * time.Millisecond, withStates: true, withFrames: true}.write(t, logs["delayed"])
	longLog{states: 60_000, frameDelay: 15 * time.Second, withStates: true, withFrames: true}.write(t, logs["far behind"])
	longLog{states: 90_000, frameDelay: 14 * time.Millisecond, lateEvery: 100, withStates: true, withFrames: true}.write(t, logs["late"])
	for name, p := range logs {
		for _, full := range []bool{false, true} {
			js, txt, html, _ := analyzed(t, []string{p}, Options{FullDecode: full, partRecords: 1 << 40})
			merged := 0
			for _, parts := range []int{2, 3, 4} {
				js2, txt2, html2, a := analyzed(t, []string{p}, Options{FullDecode: full, partRecords: 90_000 / parts})
				sameReport(t, name, js, txt, html, js2, txt2, html2)
				merged += parts - 1 - a.reread
			}
			if (name == "faults" || name == "delayed") && merged == 0 {
				t.Errorf("%s: no seam merged", name) // the others are read again: frames beyond the window
			}
		}
	}
}

// The report of a log is the same on one core as on two: the log's
// parts are the log's, not the machine's.
func TestReportSameOnOneCoreAndTwo(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and analyzes a log of 300 k records")
	}
	p := filepath.Join(t.TempDir(), "long.vrlog")
	longLog{states: 300_000, frameDelay: 14 * time.Millisecond, withStates: true, withFrames: true}.write(t, p)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(1)
	js, txt, html, a := analyzed(t, []string{p}, Options{})
	runtime.GOMAXPROCS(2)
	js2, txt2, html2, _ := analyzed(t, []string{p}, Options{})
	sameReport(t, "one core and two", js, txt, html, js2, txt2, html2)
	if a.reread != 0 {
		t.Fatalf("%d parts read again", a.reread)
	}
}

// Frames paired with a state from before an outage are judged by the
// outage threshold of the whole state stream, whatever it was while the
// log was read: a state stream at 10 Hz for a minute, then at 1 kHz,
// has a final threshold of 3 ms, and the frames of its first minute,
// up to 100 ms after their latest state, are across outages. The
// guess (the threshold so far) counted them as lag: the pairing is
// made again with the threshold known, and the figures are Lag's.
func TestLagJudgedByWholeStream(t *testing.T) {
	p := filepath.Join(t.TempDir(), "moved.vrlog")
	w, err := logfmt.Create(p, logfmt.WriterOptions{ChunkSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	zstd := logfmt.Compression{Kind: logfmt.CompressionZstd}
	sc, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState, Compression: zstd})
	fc, _ := w.AddChannel(logfmt.Channel{Name: "vr/r1/camera/front", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/camera/front", Schema: codec.SchemaFrame, Compression: zstd})
	const t0, ms = int64(1_764_446_400_000_000_000), int64(1_000_000)
	var states, frames []sampler.Stamped
	var seq, fseq uint64
	nextFrame := t0
	for ts := t0; ts < t0+120_000*ms; {
		for nextFrame <= ts {
			h := codec.NewFrameHeader(fseq, nextFrame, 1, 2, 2, codec.RGB8)
			rec := logfmt.Record{Channel: fc, RecvWallNs: nextFrame + 2*ms, RecvMonoNs: nextFrame + 2*ms, CaptureNs: nextFrame, Seq: fseq, HasStamp: true,
				Header: codec.AppendFrameHeader(nil, &h), Payload: make([]byte, 12)}
			if err := w.Write(&rec); err != nil {
				t.Fatal(err)
			}
			frames = append(frames, sampler.Stamped{TNs: nextFrame, RecvNs: rec.RecvWallNs})
			fseq++
			nextFrame += 33 * ms
		}
		st := codec.State{Seq: seq, TNs: ts}
		rec := logfmt.Record{Channel: sc, RecvWallNs: ts + ms, RecvMonoNs: ts + ms, CaptureNs: ts, Seq: seq, HasStamp: true, Payload: codec.AppendState(nil, &st)}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
		states = append(states, sampler.Stamped{TNs: ts, RecvNs: rec.RecvWallNs})
		seq++
		if ts < t0+60_000*ms {
			ts += 100 * ms
		} else {
			ts += ms
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	js, txt, html, a := analyzed(t, []string{p}, Options{partRecords: 20_000})
	var rep Report
	json.Unmarshal(js, &rep)
	lr := rep.Lag[0]
	sampler.SortStamped(states)
	want := sampler.Lag(states, frames, sampler.LagConfig{ToleranceNs: 50 * ms, OutageNs: func() int64 { return 3 * ms }})
	if lr.Count != want.Frames || lr.AcrossOutage != want.AcrossOutage || lr.Rejected != want.Rejected || lr.LatestMs.Count != want.Latest.Count() ||
		len(lr.AcrossOutages) != min(len(want.Outages), sampler.MaxLagOutages) {
		t.Fatalf("lag %+v, want %d frames, %d across (%d gaps), %d rejected, %d lags", lr, want.Frames, want.AcrossOutage, len(want.Outages), want.Rejected, want.Latest.Count())
	}
	if !a.byName["vr/r1/camera/front"].lagFixed || want.AcrossOutage < 1500 {
		t.Fatalf("not paired again (%d across)", want.AcrossOutage)
	}
	js1, txt1, html1, _ := analyzed(t, []string{p}, Options{partRecords: 1 << 40}) // the file in one part
	sameReport(t, "in one part", js1, txt1, html1, js, txt, html)
	js2, _, _, _ := analyzed(t, []string{p}, Options{FullDecode: true})
	var full Report
	json.Unmarshal(js2, &full)
	if a, b := mustJSON(rep.Lag, rep.Channels), mustJSON(full.Lag, full.Channels); a != b {
		t.Fatalf("full decode: %s\nmetadata: %s", b, a)
	}
}

func mustJSON(v ...any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
