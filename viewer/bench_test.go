package viewer

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vrlog/vrlog/foxws"
	"github.com/vrlog/vrlog/foxws/foxwstest"
	"github.com/vrlog/vrlog/internal/cputime"
	"github.com/vrlog/vrlog/internal/synth"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/mcapexport"
)

// Benchmarks of vrlog view (docs/BENCHMARKS.md "view"): a synthetic
// session (internal/synth: rgb8 frames, 1 kHz states, the recorder's
// compression) served to real WebSocket clients on loopback. Each runs
// once whatever b.N (the figures are of one playback); run them with
// -benchtime 1x.

// benchLog writes a session of d with w×h frames at 30 Hz and 1 kHz states.
func benchLog(b *testing.B, w, h uint32, d time.Duration) (string, synth.Truth) {
	b.Helper()
	cfg := synth.Config{Robot: "r1", Start: time.Unix(1_764_446_400, 0), Duration: d, StateHz: 1000, FrameHz: 30, Width: w, Height: h,
		Latency: 300 * time.Microsecond, Seed: 1}
	path := filepath.Join(b.TempDir(), "bench.vrlog")
	tr, err := synth.WriteFile(path, cfg, logfmt.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return path, tr
}

// serveBench serves the log until the benchmark ends.
func serveBench(b *testing.B, path string, speed float64) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Config{Files: []string{path}, Listener: l, Speed: speed}) }()
	b.Cleanup(func() { cancel(); <-done })
	return "ws://" + l.Addr().String()
}

// steer connects a foxglove.sdk.v1 client that holds the playback
// paused, subscribes to the states and the frames and returns the data's
// start.
func steer(b *testing.B, url string) (*foxwstest.Client, uint64) {
	c := foxwstest.Dial(b, url, foxws.SubprotocolSDK)
	for c.ByTopic["vr/r1/camera/front"] == 0 {
		c.Read()
	}
	c.Playback(foxws.PlaybackRequest{Command: foxws.Pause, Speed: 1, RequestID: "hold"})
	c.Subscribe(1, "vr/r1/state")
	c.Subscribe(2, "vr/r1/camera/front")
	for {
		if m := c.Read(); m.Op == foxws.OpPlaybackState && m.State.RequestID == "hold" {
			return c, m.State.CurrentTime
		}
	}
}

// drain reads until n data messages came, or none for idle; it returns
// how many came, the wall time from the first to the last, and the
// log-time span they covered.
func drain(c *foxwstest.Client, n int, idle time.Duration) (got int, wall time.Duration, span uint64) {
	var t0 time.Time
	var lt0, lt1 uint64
	for got < n {
		m, err := c.TryRead(idle)
		if err != nil {
			break
		}
		if m.Op != foxws.OpMessageData {
			continue
		}
		if got == 0 {
			t0, lt0 = time.Now(), m.LogTime
		}
		got++
		wall, lt1 = time.Since(t0), m.LogTime
	}
	return got, wall, lt1 - lt0
}

// One client at 1080p30 rgb8 (and 1 kHz states) at 1x gets every message;
// then the speed doubles until a pass loses a message or runs late (more
// than 10 % longer than the log time over the speed): the highest speed
// sustained.
func BenchmarkView1080p30(b *testing.B) {
	path, tr := benchLog(b, 1920, 1080, 10*time.Second)
	c, start := steer(b, serveBench(b, path, 1))
	want := int(tr.States + tr.Frames)
	frameBytes := float64(1920 * 1080 * 3)
	b.ResetTimer()
	best := 0.0
	for _, speed := range []float32{1, 2, 4, 8, 16, 32} {
		cpu0 := cputime.Process()
		c.Playback(foxws.PlaybackRequest{Command: foxws.Play, Speed: speed, Seek: true, SeekTime: start, RequestID: "go"})
		got, wall, span := drain(c, want, 5*time.Second)
		if speed == 1 { // the server and its client, one process: what a second of the log costs
			b.ReportMetric((cputime.Process()-cpu0).Seconds()/(float64(span)/1e9), "cpu-s/log-s")
		}
		late := wall.Seconds() > 1.1*float64(span)/1e9/float64(speed)
		b.Logf("speed %gx: %d of %d messages in %v for %.2f s of log time (%.0f MB/s of frames)%s", speed, got, want, wall.Round(time.Millisecond),
			float64(span)/1e9, float64(tr.Frames)*frameBytes/wall.Seconds()/1e6, map[bool]string{true: ", late", false: ""}[late])
		if speed == 1 {
			b.ReportMetric(float64(want-got), "lost-at-1x")
		}
		if got < want || late {
			break
		}
		best = float64(speed)
		c.Playback(foxws.PlaybackRequest{Command: foxws.Pause, Speed: speed, RequestID: "stop"})
		c.Until(func(m foxwstest.Msg) bool { return m.Op == foxws.OpPlaybackState && m.State.RequestID == "stop" })
	}
	b.ReportMetric(best, "max-speed-x")
	c.Close()
}

// Four clients at 640x480@30 rgb8 and 1 kHz states, 1x: every message to
// every client.
func BenchmarkViewFourClients640(b *testing.B) {
	path, tr := benchLog(b, 640, 480, 10*time.Second)
	url := serveBench(b, path, 1)
	want := int(tr.States + tr.Frames)
	var wg sync.WaitGroup
	lost := make([]int, 4)
	b.ResetTimer()
	cpu0 := cputime.Process()
	for i := range lost {
		c := foxwstest.Dial(b, url, foxws.SubprotocolV1)
		for c.ByTopic["vr/r1/camera/front"] == 0 {
			c.Read()
		}
		c.Subscribe(1, "vr/r1/state")
		c.Subscribe(2, "vr/r1/camera/front")
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, wall, _ := drain(c, want, 5*time.Second)
			lost[i] = want - got
			b.Logf("client %d: %d of %d messages in %v", i, got, want, wall.Round(time.Millisecond))
			c.Close()
		}()
	}
	wg.Wait()
	total := 0
	for _, n := range lost {
		total += n
	}
	b.ReportMetric(float64(total), "lost")
	b.ReportMetric((cputime.Process()-cpu0).Seconds()/10, "cpu-s/log-s")
}

// Seeks in a 2 GB log (11 s of 1080p30, raw size): from the request to
// the first message at or after the seek time.
func BenchmarkViewSeek2GB(b *testing.B) {
	path, _ := benchLog(b, 1920, 1080, 11*time.Second)
	c, start := steer(b, serveBench(b, path, 1))
	b.ResetTimer()
	var lat []time.Duration
	for i := range 20 {
		at := start + uint64(i*7%20)*uint64(500*time.Millisecond) + 123_456_789
		t0 := time.Now()
		c.Playback(foxws.PlaybackRequest{Command: foxws.Play, Speed: 1, Seek: true, SeekTime: at, RequestID: "s"})
		seen := false
		c.Until(func(m foxwstest.Msg) bool {
			seen = seen || (m.Op == foxws.OpPlaybackState && m.State.RequestID == "s")
			return seen && m.Op == foxws.OpMessageData
		})
		lat = append(lat, time.Since(t0))
		c.Playback(foxws.PlaybackRequest{Command: foxws.Pause, Speed: 1, RequestID: "p"})
		c.Until(func(m foxwstest.Msg) bool { return m.Op == foxws.OpPlaybackState && m.State.RequestID == "p" })
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1e3, "seek-p50-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1e3, "seek-max-ms")
	c.Close()
}

// The 1080p30 log exported as uncompressed MCAP (the export's fastest
// path), into nothing: its rate beside the viewer's.
func BenchmarkExportSame1080pLog(b *testing.B) {
	path, tr := benchLog(b, 1920, 1080, 10*time.Second)
	r, err := logfmt.Open(path, logfmt.ReaderOptions{Map: true})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ResetTimer()
	t0, cpu0 := time.Now(), cputime.Process()
	w, err := mcapexport.NewMCAP(io.Discard, mcapexport.MCAPOptions{Compression: "none", Stable: r.Mapped})
	if err != nil {
		b.Fatal(err)
	}
	for _, ch := range r.Channels() {
		w.AddChannel(ch)
	}
	it := r.Records(logfmt.Filter{Workers: 1})
	for it.Next() {
		if err := w.Write(it.Record()); err != nil {
			b.Fatal(err)
		}
	}
	if err := it.Err(); err != nil {
		b.Fatal(err)
	}
	w.Close()
	wall := time.Since(t0)
	b.ReportMetric(float64(tr.Frames)*1920*1080*3/wall.Seconds()/1e6, "frame-MB/s")
	b.ReportMetric(10/wall.Seconds(), "x-realtime")
	b.ReportMetric((cputime.Process()-cpu0).Seconds()/10, "cpu-s/log-s")
}
