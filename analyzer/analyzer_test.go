package analyzer

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/cputime"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
)

var update = flag.Bool("update", false, "rewrite the golden reports in testdata/")

func writeSession(t *testing.T, cfg synth.Config) (string, synth.Truth) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.vrlog")
	tr, err := synth.WriteFile(p, cfg, logfmt.WriterOptions{ChunkSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return p, tr
}

func TestKnownFaults(t *testing.T) {
	cfg := synth.Default()
	p, tr := writeSession(t, cfg)
	rep, err := AnalyzeFiles([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := rep.Channel(synth.StateKey("r1"))
	fr := rep.Channel(synth.CameraKey("r1"))
	if st == nil || fr == nil {
		t.Fatalf("channels missing: %+v", rep.Channels)
	}
	if rep.EpochNs != tr.EpochNs || !strings.Contains(rep.EpochSource, "vr/r1/state") {
		t.Fatalf("epoch %d (%s), want %d", rep.EpochNs, rep.EpochSource, tr.EpochNs)
	}
	if st.Count != tr.States || st.Undecodable != tr.Garbage || st.Skipped != tr.SkippedStates || st.SkipEvents != uint64(tr.StateGaps) {
		t.Fatalf("state: count %d undecodable %d skipped %d in %d gaps; truth %+v", st.Count, st.Undecodable, st.Skipped, st.SkipEvents, tr)
	}
	// Seqs 40, 41 and 100 were never published.
	if s := st.Skips[0]; s.LastSeq != 39 || s.Seq != 42 || s.Skipped != 2 || s.Elapsed != 1.68 {
		t.Fatalf("first skip %+v", s)
	}
	if s := st.Skips[1]; s.LastSeq != 99 || s.Seq != 101 || s.Elapsed != 4.04 {
		t.Fatalf("second skip %+v", s)
	}
	// The restart: elapsed froze at 5.84 s and resumed at 21.77 s.
	if len(st.Restarts) != 1 || st.Restarts[0].ElapsedBefore != 5.84 || st.Restarts[0].ElapsedAfter != 21.77 ||
		st.Restarts[0].LastSeq != 146 || st.Restarts[0].Seq != 0 {
		t.Fatalf("restarts %+v", st.Restarts)
	}
	if len(st.Outages) != 1 || !st.Outages[0].Restart || st.Outages[0].GapS != 15.93 {
		t.Fatalf("outages %+v", st.Outages)
	}
	if st.NominalPeriodMs != 40 || st.DtMs.P50 != 40 || st.NominalRateHz != 25 {
		t.Fatalf("state dt %+v nominal %v", st.DtMs, st.NominalPeriodMs)
	}
	// The recorder's 2 drops are a seq gap too: missing by seq 3, the
	// publisher's 1 (what --max-skips gates).
	if fr.Count != tr.Frames || fr.Skipped != 1+cfg.RecorderDrops || fr.PublisherSkipped != 1 || fr.RecorderDrops != cfg.RecorderDrops || fr.RestartCount != 1 {
		t.Fatalf("frames %+v", fr)
	}
	if fr.Skips[0].LastSeq != 76 || fr.Skips[0].Seq != 78 {
		t.Fatalf("frame skip %+v", fr.Skips)
	}
	// Latency = transport 0.3 ms ± 0.1 minus the clock offset (-0.25 ms).
	if l := st.LatencyMs; l == nil || l.Min < 0.45 || l.Max > 0.65 {
		t.Fatalf("latency %+v", st.LatencyMs)
	}
	// States 40 and 41 missing: the frame at 1.6787 s sees the state of
	// 1.56 s as its latest, 118.667 ms old, and is rejected with 3 others.
	if len(rep.Lag) != 1 || rep.Lag[0].Count != tr.Frames || rep.Lag[0].LatestMs.Max != 118.667 || rep.Lag[0].Rejected != 4 {
		t.Fatalf("lag %+v", rep.Lag)
	}
	if c := rep.Clock; c == nil || c.Probes != int(tr.Probes) || c.OffsetMs > -0.2 || c.OffsetMs < -0.3 {
		t.Fatalf("clock %+v", rep.Clock)
	}
	raw := rep.Channel(synth.RawKey("r1"))
	if raw == nil || raw.Kind != KindRaw || raw.Count != tr.Raw || raw.Skipped != 0 || raw.LatencyMs != nil {
		t.Fatalf("raw %+v", raw)
	}
	// A raw channel's elapsed is of its receive stamps, like its events'.
	if want := codec.Elapsed(raw.FirstNs, rep.EpochNs); math.Abs(raw.FirstElapsed-want) > 1e-6 || raw.FirstElapsed <= 0 {
		t.Fatalf("raw first_elapsed %v, want %v", raw.FirstElapsed, want)
	}
	// rate_hz counts the samples with a stamp, not the undecodable records.
	span := float64(st.LastNs-st.FirstNs) / 1e9
	if want := round3(float64(st.Count-st.Undecodable-1) / span); st.Undecodable == 0 || st.RateHz != want {
		t.Fatalf("rate_hz %v, want (count - undecodable - 1) / span = %v", st.RateHz, want)
	}
	// dt_ms and recv_dt_ms are over the same pairs of samples.
	for _, c := range rep.Channels {
		if c.Kind != KindProbe && c.DtMs.Count != c.RecvDtMs.Count {
			t.Fatalf("%s: %d capture intervals, %d receive intervals", c.Name, c.DtMs.Count, c.RecvDtMs.Count)
		}
	}
}

// Frames stamped 27 ms before they are published, against 100 Hz states:
// the latest-state lag stays below the 10 ms state period, the lag against
// the interpolated state timeline shows the delay (27 ms plus the camera
// stack's 2 ms in synth).
func TestLagBelowStatePeriod(t *testing.T) {
	cfg := synth.Default()
	cfg.StateHz, cfg.FrameDelay, cfg.RestartAt, cfg.DropStates, cfg.DropFrames = 100, 27*time.Millisecond, 0, nil, nil
	p, _ := writeSession(t, cfg)
	rep, err := AnalyzeFiles([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := rep.Lag[0]
	if l.LatestMs.Max >= 10 || l.InterpolatedMs.Count < l.Count-2 || l.InterpolatedMs.P50 < 28.5 || l.InterpolatedMs.P50 > 29.5 {
		t.Fatalf("latest %+v, interpolated %+v", l.LatestMs, l.InterpolatedMs)
	}
	t.Logf("latest state lag p50 %.3f max %.3f ms; against the interpolated state timeline p50 %.3f ms", l.LatestMs.P50, l.LatestMs.Max, l.InterpolatedMs.P50)
}

// The metadata path (stamps stored at record time) and decoding every
// payload with epoch 0 must give the same report.
func TestMetadataPathMatchesFullDecode(t *testing.T) {
	p, _ := writeSession(t, synth.Default())
	fast, err := AnalyzeFiles([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	full, err := AnalyzeFiles([]string{p}, Options{FullDecode: true})
	if err != nil {
		t.Fatal(err)
	}
	fast.Files, full.Files = nil, nil
	a, _ := json.Marshal(fast)
	b, _ := json.Marshal(full)
	if !bytes.Equal(a, b) {
		t.Fatalf("metadata path and full decode differ:\n%s\n%s", a, b)
	}
}

func TestChecksAndBaseline(t *testing.T) {
	p, _ := writeSession(t, synth.Default())
	rep, err := AnalyzeFiles([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	lim := func(s string, dur bool) Limit {
		l, err := ParseLimit(s, dur)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if err := rep.ApplyChecks(Thresholds{
		MaxSkips:    []Limit{lim("0", false), lim("vr/*/camera/*=1", false)},
		MaxRestarts: []Limit{lim("1", false)},
		MaxOutageMs: []Limit{lim("vr/r1/state=10s", true)},
		MinRate:     []Limit{lim("vr/r1/state=24", false)},
		MaxLagMs:    []Limit{lim("200ms", true)},
	}); err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, c := range rep.Failed() {
		failed = append(failed, c.Name+" "+c.Channel)
	}
	want := "max-skips vr/r1/state,max-outage vr/r1/state,min-rate vr/r1/state"
	if strings.Join(failed, ",") != want || rep.Pass {
		t.Fatalf("failed %v, want %s", failed, want)
	}
	if m := rep.Failed()[0].Message; !strings.Contains(m, "3 (limit ≤ 0)") || !strings.Contains(m, "off by 3") {
		t.Fatalf("message %q", m)
	}

	// A clean run against this one as baseline passes; this one against a
	// clean baseline regresses.
	clean := synth.Default()
	clean.DropStates, clean.DropFrames, clean.RestartAt, clean.GarbageStates = nil, nil, 0, 0
	cp, _ := writeSession(t, clean)
	good, _ := AnalyzeFiles([]string{cp}, Options{})
	bad, _ := AnalyzeFiles([]string{p}, Options{})
	bad.CompareBaseline(good, Tolerances{Default: 0.1})
	if bad.Pass || len(bad.Regressions) == 0 {
		t.Fatal("regressions not found")
	}
	good.CompareBaseline(bad, Tolerances{Default: 0.1})
	if !good.Pass {
		t.Fatalf("improvement reported as regression: %+v", good.Regressions)
	}
}

func TestOutputs(t *testing.T) {
	p, tr := writeSession(t, synth.Default())
	a := New(Options{PlotBins: 100})
	if err := a.AddFile(p); err != nil {
		t.Fatal(err)
	}
	rep := a.Report()
	if err := rep.ApplyChecks(Thresholds{MaxSkips: []Limit{{Value: 0}}}); err != nil {
		t.Fatal(err)
	}
	var csv bytes.Buffer
	if err := a.WriteCSV(&csv, rep, codec.TimeElapsed); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	// One row per data record except undecodable ones, plus the header.
	if want := int(tr.States-tr.Garbage+tr.Frames+tr.Raw) + 1; len(lines) != want {
		t.Fatalf("timeline has %d lines, want %d", len(lines), want)
	}
	if lines[0]+"\n" != CSVHeader || !strings.Contains(csv.String(), ",restart+outage\n") || !strings.Contains(csv.String(), ",skip") {
		t.Fatalf("timeline:\n%s", lines[:3])
	}
	var j, h bytes.Buffer
	if err := rep.WriteJUnit(&j); err != nil || !strings.Contains(j.String(), `<failure message="max-skips vr/r1/state`) {
		t.Fatalf("junit: %v\n%s", err, j.String())
	}
	if err := a.WriteHTML(&h, rep); err != nil || strings.Count(h.String(), "<svg") < 4 || !strings.Contains(h.String(), "FAIL") {
		t.Fatalf("html: %v", err)
	}
}

// TestSampleGolden pins the report of the bundled sample, text and JSON.
func TestSampleGolden(t *testing.T) {
	const sample = "../testdata/sample.vrlog"
	rep, err := AnalyzeFiles([]string{sample}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var txt bytes.Buffer
	rep.WriteText(&txt, codec.TimeElapsed)
	js, _ := json.MarshalIndent(rep, "", "  ")
	for _, g := range []struct {
		path string
		got  []byte
	}{{"../testdata/sample.expected.txt", txt.Bytes()}, {"../testdata/sample.expected.json", append(js, '\n')}} {
		if *update {
			os.WriteFile(g.path, g.got, 0o644)
		}
		want, err := os.ReadFile(g.path)
		if err != nil {
			t.Fatalf("%v (run go test ./analyzer -run Golden -update)", err)
		}
		if !bytes.Equal(want, g.got) {
			t.Errorf("%s differs from the report:\n%s", g.path, g.got)
		}
	}
}

func TestEdgeLogs(t *testing.T) {
	dir := t.TempDir()
	// An empty log: no channels at all.
	empty := filepath.Join(dir, "empty.vrlog")
	w, _ := logfmt.Create(empty, logfmt.WriterOptions{})
	w.Close()
	rep, err := AnalyzeFiles([]string{empty}, Options{})
	if err != nil || len(rep.Channels) != 0 || rep.EpochSource != "" {
		t.Fatalf("empty: %v %+v", err, rep)
	}
	// Frames only, one sample each on two channels.
	one := filepath.Join(dir, "one.vrlog")
	w, _ = logfmt.Create(one, logfmt.WriterOptions{})
	id, _ := w.AddChannel(logfmt.Channel{Name: "cam", Transport: logfmt.TransportIceoryx2, Schema: codec.SchemaFrame})
	h := codec.NewFrameHeader(5, 1e18, 1, 1, 1, codec.Mono8)
	w.Write(&logfmt.Record{Channel: id, RecvWallNs: 1e18 + 1, RecvMonoNs: 1, CaptureNs: 1e18, Seq: 5, HasStamp: true,
		Header: codec.AppendFrameHeader(nil, &h), Payload: []byte{7}})
	w.Close()
	rep, err = AnalyzeFiles([]string{one}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Channel("cam")
	if c.Count != 1 || c.RateHz != 0 || c.DtMs.Count != 0 || len(rep.Lag) != 0 || rep.EpochNs != 1e18 || len(rep.Notes) != 1 {
		t.Fatalf("single frame: %+v %+v", c, rep)
	}
	var txt bytes.Buffer
	rep.WriteText(&txt, codec.TimeRFC3339)
	if !strings.Contains(txt.String(), "no state channel") {
		t.Fatalf("text:\n%s", txt.String())
	}
	// Raw channels only, and a channel the recorder could not open: elapsed
	// counts from the earliest receive stamp, and the error is reported.
	rawOnly := filepath.Join(dir, "raw.vrlog")
	w, _ = logfmt.Create(rawOnly, logfmt.WriterOptions{})
	d, _ := w.AddChannel(logfmt.Channel{Name: "diag", Transport: logfmt.TransportZenoh, Topic: "diag"})
	w.AddChannel(logfmt.Channel{Name: "cam", Transport: logfmt.TransportIceoryx2, Topic: "cam", Meta: map[string]string{logfmt.MetaError: "no slots"}})
	for i := int64(0); i < 3; i++ {
		w.Write(&logfmt.Record{Channel: d, RecvWallNs: 2e18 + i*1e9, RecvMonoNs: 1 + i*1e9, Payload: []byte("x")})
	}
	w.Close()
	rep, err = AnalyzeFiles([]string{rawOnly}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.EpochNs != 2e18 || !strings.Contains(rep.EpochSource, "earliest receive stamp (diag)") || rep.Channel("diag").FirstElapsed != 0 ||
		rep.Channel("diag").Skips == nil || rep.Channel("cam").Error != "no slots" || len(rep.Notes) != 1 {
		t.Fatalf("raw only: %+v", rep)
	}
	txt.Reset()
	rep.WriteText(&txt, codec.TimeElapsed)
	if !strings.Contains(txt.String(), "channel cam was NOT RECORDED: no slots") {
		t.Fatalf("text:\n%s", txt.String())
	}
	// Not a log.
	junk := filepath.Join(dir, "junk.vrlog")
	os.WriteFile(junk, []byte("this is not a vrlog file at all, just text"), 0o644)
	if _, err := AnalyzeFiles([]string{junk}, Options{}); err == nil || !strings.Contains(err.Error(), "junk.vrlog") {
		t.Fatalf("junk: %v", err)
	}
}

func TestTruncatedLogIsAnalyzedByScan(t *testing.T) {
	p, _ := writeSession(t, synth.Default())
	b, _ := os.ReadFile(p)
	cut := filepath.Join(t.TempDir(), "cut.vrlog")
	os.WriteFile(cut, b[:len(b)*2/3], 0o644)
	rep, err := AnalyzeFiles([]string{cut}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Files[0].Indexed || rep.Channel(synth.StateKey("r1")) == nil {
		t.Fatalf("%+v", rep.Files)
	}
	// The sample torn mid-chunk: its last block is read twice by the scan.
	sample, _ := os.ReadFile("../testdata/sample.vrlog")
	os.WriteFile(cut, sample[:100000], 0o644)
	if rep, err = AnalyzeFiles([]string{cut}, Options{}); err != nil {
		t.Fatal(err)
	}
	if f := rep.Files[0]; f.BytesRead > f.SizeBytes {
		t.Errorf("read %d bytes of a %d-byte file", f.BytesRead, f.SizeBytes)
	}
}

func BenchmarkTimingScan(b *testing.B) {
	cfg := synth.Default()
	cfg.StateHz, cfg.FrameHz, cfg.Duration, cfg.RawHz, cfg.ProbeEvery = 1000, 30, 300*time.Second, 0, 0
	p := filepath.Join(b.TempDir(), "bench.vrlog")
	tr, err := synth.WriteFile(p, cfg, logfmt.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	n := tr.States + tr.Frames
	cpu0 := cputime.Process()
	b.ResetTimer()
	for b.Loop() {
		if _, err := AnalyzeFiles([]string{p}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cputime.Process() - cpu0
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrecords/s")
	// CPU time is what a shared machine does not inflate: with -cpu 1,
	// records per CPU second are the one-core figure of a quiet machine.
	if cpu > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds()/1e6, "Mrecords/cpu-s")
	}
}

// analyze --csv: elapsed counts from the session epoch in every row (the
// sample's first frame was captured 8 ms before the first state), and
// +outage marks exactly the report's outages.
func TestCSVSample(t *testing.T) {
	a := New(Options{})
	if err := a.AddFile("../testdata/sample.vrlog"); err != nil {
		t.Fatal(err)
	}
	rep := a.Report()
	var b bytes.Buffer
	if err := a.WriteCSV(&b, rep, codec.TimeElapsed); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",")+"\n" != CSVHeader || len(rows) != 1+358+300 {
		t.Fatalf("header %v, %d rows", rows[0], len(rows))
	}
	if rows[1][0] != "vr/r1/camera/front" || rows[1][3] != "-0.008000000" {
		t.Fatalf("first row %v: want the frame 8 ms before the epoch", rows[1])
	}
	outages := 0
	for _, r := range rows[1:] {
		tns, _ := strconv.ParseInt(r[2], 10, 64)
		if r[3] != codec.FormatSeconds(tns-rep.EpochNs) {
			t.Fatalf("row %v: elapsed is not t_ns - epoch", r)
		}
		if strings.HasSuffix(r[9], "+outage") {
			outages++
		}
	}
	want := 0
	for _, c := range rep.Channels {
		want += len(c.Outages)
	}
	if outages != want {
		t.Fatalf("%d rows marked +outage, the report lists %d outages", outages, want)
	}
}

// A corrupt payload found by --full-decode names the file once ("f: f:
// offset …" named it twice).
func TestFullDecodeErrorNamesFileOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.vrlog")
	w, err := logfmt.Create(p, logfmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := w.AddChannel(logfmt.Channel{Name: "s", Transport: logfmt.TransportZenoh, Topic: "s", Schema: codec.SchemaState, Compression: logfmt.Compression{Kind: logfmt.CompressionNone}})
	for k := range 50 {
		st := codec.State{Seq: uint64(k), TNs: 1e18 + int64(k)*1e7}
		rec := &logfmt.Record{Channel: id, RecvMonoNs: int64(k) * 1e7, RecvWallNs: st.TNs + 1e6, Seq: st.Seq, CaptureNs: st.TNs, HasStamp: true,
			Payload: append(codec.AppendState(nil, &st), []byte("PAYLOADMARK")...)}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	i := bytes.Index(b, []byte("PAYLOADMARK"))
	if i < 0 {
		t.Fatal("payload not found uncompressed")
	}
	b[i] ^= 0xff
	os.WriteFile(p, b, 0o644)
	_, err = AnalyzeFiles([]string{p}, Options{FullDecode: true})
	if err == nil || strings.Count(err.Error(), p) != 1 {
		t.Fatalf("analyze --full-decode of a corrupt payload: %v, want the file named once", err)
	}
}
