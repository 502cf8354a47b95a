package analyzer

import (
	"cmp"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// longLog is a recorder's log of one robot, generated as it streams (so
// that it can be long): 1 kHz states encoded by the codec, received
// 300 µs ± 100 µs after capture, and 30 Hz frames (header and a small
// payload: the metadata path never reads pixels) received frameDelay
// ± 2 ms after capture (every lateEvery-th one 25 s more), interleaved
// in arrival order.
type longLog struct {
	states     int
	frameDelay time.Duration
	lateEvery  int
	withStates bool
	withFrames bool
}

func (g longLog) write(tb testing.TB, path string) (records int) {
	tb.Helper()
	w, err := logfmt.Create(path, logfmt.WriterOptions{Sync: logfmt.SyncNone, FlushInterval: -1})
	if err != nil {
		tb.Fatal(err)
	}
	zstd := logfmt.Compression{Kind: logfmt.CompressionZstd}
	var stateCh, frameCh uint16
	if g.withStates {
		stateCh, _ = w.AddChannel(logfmt.Channel{Name: "vr/r1/state", Transport: logfmt.TransportZenoh, Topic: "vr/r1/state", Schema: codec.SchemaState, Compression: zstd})
	}
	if g.withFrames {
		frameCh, _ = w.AddChannel(logfmt.Channel{Name: "vr/r1/camera/front", Transport: logfmt.TransportIceoryx2, Topic: "vr/r1/camera/front", Schema: codec.SchemaFrame, Compression: zstd})
	}
	stateRng, frameRng := rand.New(rand.NewPCG(11, 12)), rand.New(rand.NewPCG(13, 14)) // apart: a log of states alone has the same stamps
	const t0, ms = int64(1_764_446_400_000_000_000), int64(1_000_000)
	type frame struct {
		rec  logfmt.Record
		hdr  []byte
		recv int64
	}
	var queue []frame // frames captured, not yet received
	var st codec.State
	buf := make([]byte, 0, 256)
	pix := make([]byte, 64)
	var fseq uint64
	emit := func(r *logfmt.Record) {
		if err := w.Write(r); err != nil {
			tb.Fatal(err)
		}
		records++
	}
	for i := range g.states {
		t := t0 + int64(i)*ms
		if g.withFrames && i%33 == 0 { // ~30 Hz
			h := codec.NewFrameHeader(fseq, t, 1, 1920, 1080, codec.RGB8)
			recv := t + g.frameDelay.Nanoseconds() + frameRng.Int64N(4*ms+1) - 2*ms
			if g.lateEvery > 0 && fseq%uint64(g.lateEvery) == 1 {
				recv += 25e9
			}
			queue = append(queue, frame{logfmt.Record{Channel: frameCh, RecvWallNs: recv, RecvMonoNs: recv - hostMonoOrigin, CaptureNs: t, Seq: fseq, HasStamp: true,
				PublisherID: []byte("cam-front"), Payload: pix}, codec.AppendFrameHeader(nil, &h), recv})
			fseq++
		}
		recv := t + 300_000 + stateRng.Int64N(200_001) - 100_000
		slices.SortStableFunc(queue, func(a, b frame) int { return cmp.Compare(a.recv, b.recv) }) // a few, nearly sorted
		for len(queue) > 0 && queue[0].recv <= recv {
			f := &queue[0]
			f.rec.Header = f.hdr
			emit(&f.rec)
			queue = queue[1:]
		}
		if g.withStates {
			x := float64(i) / 1000
			st = codec.State{Seq: uint64(i), TNs: t, EstimateTNs: t - 4*ms,
				Position:    codec.Vec3{X: math.Sin(x), Y: math.Cos(x), Z: 0.85},
				Orientation: codec.Quat{Z: math.Sin(x / 2), W: math.Cos(x / 2)}, LinearVelocity: codec.Vec3{X: math.Cos(x), Y: -math.Sin(x)},
				AngularVelocity: codec.Vec3{Z: 0.5},
				Sensors:         []codec.Sensor{{ID: 1, TNs: t - ms}, {ID: 2, TNs: t - 5*ms/2}, {ID: 3, TNs: t - 10*ms}, {ID: 4, TNs: t - ms/2}}}
			buf = codec.AppendState(buf[:0], &st)
			emit(&logfmt.Record{Channel: stateCh, RecvWallNs: recv, RecvMonoNs: recv - hostMonoOrigin, CaptureNs: t, Seq: uint64(i), HasStamp: true,
				PublisherID: []byte("sim-r1"), Payload: buf})
		}
	}
	slices.SortStableFunc(queue, func(a, b frame) int { return cmp.Compare(a.recv, b.recv) })
	for i := range queue {
		queue[i].rec.Header = queue[i].hdr
		emit(&queue[i].rec)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return records
}

func lagJSON(tb testing.TB, paths []string, opts Options) (string, *Report) {
	tb.Helper()
	rep, err := AnalyzeFiles(paths, opts)
	if err != nil {
		tb.Fatal(err)
	}
	b, _ := json.Marshal(rep.Lag)
	return string(b), rep
}

// Pairing in a window gives the lag figures of pairing the whole log
// (LagWindow < 0), also when states and frames come in separate files
// (two recorders' logs, in either order) and when every frame is late by
// more than the window; frames out of order among themselves by more than
// the window are reported, never silently different.
func TestLagWindow(t *testing.T) {
	dir := t.TempDir()
	both, states, frames := filepath.Join(dir, "both.vrlog"), filepath.Join(dir, "states.vrlog"), filepath.Join(dir, "frames.vrlog")
	g := longLog{states: 200_000, frameDelay: 14 * time.Millisecond, withStates: true, withFrames: true}
	g.write(t, both)
	g.withFrames = false
	g.write(t, states)
	g.withFrames, g.withStates = true, false
	g.write(t, frames)

	want, rep := lagJSON(t, []string{both}, Options{LagWindow: -1})
	if len(rep.Lag) != 1 || rep.Lag[0].Count != 6061 || rep.Lag[0].InterpolatedMs.Count == 0 {
		t.Fatalf("exact pairing: %s", want)
	}
	for _, c := range []struct {
		name  string
		paths []string
		opts  Options
	}{
		{"one log", []string{both}, Options{}},
		{"states then frames", []string{states, frames}, Options{}},
		{"frames then states", []string{frames, states}, Options{}},
		{"small window", []string{both}, Options{LagWindow: 100 * time.Millisecond}},
	} {
		got, rep := lagJSON(t, c.paths, c.opts)
		if got != want || len(rep.Notes) != 0 {
			t.Errorf("%s: lag %s, notes %q; want %s", c.name, got, rep.Notes, want)
		}
	}

	delayed := filepath.Join(dir, "delayed.vrlog")
	longLog{states: 60_000, frameDelay: 15 * time.Second, withStates: true, withFrames: true}.write(t, delayed)
	exact, _ := lagJSON(t, []string{delayed}, Options{LagWindow: -1})
	if got, rep := lagJSON(t, []string{delayed}, Options{}); got != exact || len(rep.Notes) != 0 {
		t.Errorf("every frame 15 s late: lag %s, notes %q; want %s", got, rep.Notes, exact)
	}

	late := filepath.Join(dir, "late.vrlog")
	longLog{states: 90_000, frameDelay: 14 * time.Millisecond, lateEvery: 100, withStates: true, withFrames: true}.write(t, late)
	exact, _ = lagJSON(t, []string{late}, Options{LagWindow: -1})
	if got, rep := lagJSON(t, []string{late}, Options{LagWindow: 30 * time.Second}); got != exact || len(rep.Notes) != 0 {
		t.Errorf("30 s window, some frames 25 s late: lag %s, notes %q; want %s", got, rep.Notes, exact)
	}
	_, rep = lagJSON(t, []string{late}, Options{})
	if len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "beyond the pairing window (2s") {
		t.Errorf("2 s window, some frames 25 s late: notes %q", rep.Notes)
	}
}

// analyzeHeap analyzes path and returns the heap the analysis holds
// once the log is read (after a GC) and the peak heap in use seen
// while it ran (sampled).
func analyzeHeap(tb testing.TB, path string) (retained, peak uint64) {
	tb.Helper()
	runtime.GC()
	var stop atomic.Bool
	done := make(chan uint64)
	go func() {
		var ms runtime.MemStats
		var top uint64
		for !stop.Load() {
			runtime.ReadMemStats(&ms)
			top = max(top, ms.HeapInuse)
			time.Sleep(time.Millisecond)
		}
		done <- top
	}()
	a := New(Options{})
	if err := a.AddFile(path); err != nil {
		tb.Fatal(err)
	}
	stop.Store(true)
	peak = <-done
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	retained = ms.HeapAlloc
	if rep := a.Report(); len(rep.Lag) != 1 || len(rep.Notes) != 0 {
		tb.Fatalf("%+v", rep.Lag)
	}
	runtime.KeepAlive(a)
	return retained, peak
}

// The heap an analysis holds does not grow with the log: 100 k vs 1 M
// records (the benchmark compares 1 M and 10 M).
func TestMemoryFlatInLogLength(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a log of 1 M records")
	}
	dir := t.TempDir()
	small, large := filepath.Join(dir, "small.vrlog"), filepath.Join(dir, "large.vrlog")
	longLog{states: 100_000, frameDelay: 14 * time.Millisecond, withStates: true, withFrames: true}.write(t, small)
	longLog{states: 1_000_000, frameDelay: 14 * time.Millisecond, withStates: true, withFrames: true}.write(t, large)
	rs, _ := analyzeHeap(t, small)
	rl, _ := analyzeHeap(t, large)
	// Before the window, lag pairing kept 16 bytes per state and frame:
	// 14.5 MB more for the large log.
	if rl > rs+2<<20 {
		t.Fatalf("heap held after reading: %d B for 100 k records, %d B for 1 M", rs, rl)
	}
}

// BenchmarkAnalyzeMemory reports the heap an analysis holds and its peak
// for logs of 1 M and 10 M records (each written once, outside the timing).
func BenchmarkAnalyzeMemory(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"1M", 1_000_000}, {"10M", 10_000_000}} {
		n := c.n
		b.Run(c.name, func(b *testing.B) {
			p := filepath.Join(b.TempDir(), "long.vrlog")
			recs := longLog{states: n * 33 / 34, frameDelay: 14 * time.Millisecond, withStates: true, withFrames: true}.write(b, p)
			var retained, peak uint64
			b.ResetTimer()
			for b.Loop() {
				retained, peak = analyzeHeap(b, p)
			}
			b.ReportMetric(float64(recs), "records")
			b.ReportMetric(float64(retained)/1e6, "MB-held")
			b.ReportMetric(float64(peak)/1e6, "MB-peak")
		})
	}
}
