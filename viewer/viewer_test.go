package viewer

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/vrlog/vrlog/foxws"
	"github.com/vrlog/vrlog/foxws/foxwstest"
	"github.com/vrlog/vrlog/logfmt"
)

// sample is the bundled sample log: 29 s of the simulator recorded over
// the real transports (frames, states, the recorder's clock probes).
var sample = filepath.Join("..", "testdata", "sample.vrlog")

// start serves cfg on a loopback port until the test ends.
func start(t *testing.T, cfg Config) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listener = l
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "ws://" + l.Addr().String()
}

// counts reads the sample's records per channel name.
func counts(t *testing.T) (map[string]int, int64, int64) {
	t.Helper()
	r, err := logfmt.Open(sample, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string]int{}
	for _, c := range r.Channels() {
		out[c.Name] = int(r.StatsOf(c.ID).Records)
	}
	first, last := int64(-1), int64(0)
	for _, c := range r.Chunks() {
		if first < 0 || c.MinWallNs < first {
			first = c.MinWallNs
		}
		last = max(last, c.MaxWallNs)
	}
	return out, first, last
}

// Every record of the log reaches a foxglove.websocket.v1 client that
// only subscribes (playback starts then, here at 20x), on the log's
// clock, with time messages on the same clock.
func TestPlaysWholeLogToV1Client(t *testing.T) {
	want, first, last := counts(t)
	url := start(t, Config{Files: []string{sample}, Speed: 20})
	c := foxwstest.Dial(t, url, foxws.SubprotocolV1)
	c.Read() // advertise
	subs := map[uint32]string{}
	for topic := range want {
		subs[uint32(len(subs)+1)] = topic
		c.Subscribe(uint32(len(subs)), topic)
	}
	got := map[string]int{}
	defer func() { t.Logf("got %v of %v", got, want) }()
	total, n := 0, 0
	for _, v := range want {
		total += v
	}
	var lastTime, lastLog uint64
	for n < total {
		m := c.Read()
		switch m.Op {
		case foxws.OpTime:
			if m.LogTime < lastTime {
				t.Fatalf("time went back: %d after %d", m.LogTime, lastTime)
			}
			lastTime = m.LogTime
		case foxws.OpMessageData:
			got[subs[m.SubID]]++
			n++
			if m.LogTime < lastLog || int64(m.LogTime) < first-int64(time.Second) || int64(m.LogTime) > last+int64(time.Second) {
				t.Fatalf("log time %d (previous %d) outside the log's [%d, %d]", m.LogTime, lastLog, first, last)
			}
			lastLog = m.LogTime
		}
	}
	for topic, w := range want {
		if got[topic] != w {
			t.Errorf("%s: %d messages, want %d", topic, got[topic], w)
		}
	}
	if lastTime == 0 {
		t.Error("no time message")
	}
	// Another such client, after the end, plays the log again.
	c2 := foxwstest.Dial(t, url, foxws.SubprotocolV1)
	c2.Read()
	c2.Subscribe(1, "vr/r1/state")
	c2.Until(func(m foxwstest.Msg) bool { return m.Op == foxws.OpMessageData })
}

// A foxglove.sdk.v1 client steers the playback: seek (answered from the
// index), pause (no more data), speed, play, and the end.
func TestRangedPlayback(t *testing.T) {
	_, first, last := counts(t)
	url := start(t, Config{Files: []string{sample}})
	c := foxwstest.Dial(t, url, foxws.SubprotocolSDK)
	if caps, _ := c.Info["capabilities"].([]any); len(caps) != 2 || caps[1] != foxws.CapPlaybackControl {
		t.Fatalf("capabilities %v", c.Info["capabilities"])
	}
	ds, de := c.Info["dataStartTime"].(map[string]any), c.Info["dataEndTime"].(map[string]any)
	start := uint64(ds["sec"].(float64))*1e9 + uint64(ds["nsec"].(float64))
	end := uint64(de["sec"].(float64))*1e9 + uint64(de["nsec"].(float64))
	if d := int64(start) - first; d < -int64(time.Second) || d > int64(time.Second) || end <= start || int64(end) > last+int64(time.Second) {
		t.Fatalf("data range [%d, %d], log's wall [%d, %d]", start, end, first, last)
	}
	c.Read() // advertise
	if m := c.Read(); m.Op != foxws.OpPlaybackState || m.State.Status != foxws.StatusPaused {
		t.Fatalf("state on connecting %+v", m)
	}
	// Pause first (a client in control): subscribing then does not start it.
	c.Playback(foxws.PlaybackRequest{Command: foxws.Pause, Speed: 1, RequestID: "p0"})
	state := func(id string) foxws.PlaybackState {
		var st foxws.PlaybackState
		c.Until(func(m foxwstest.Msg) bool {
			st = m.State
			return m.Op == foxws.OpPlaybackState && m.State.RequestID == id
		})
		return st
	}
	state("p0")
	c.Subscribe(1, "vr/r1/state")
	c.Subscribe(2, "vr/r1/camera/front")
	// Seek 3 s in (before the simulator's restart outage), playing at 2x:
	// the first message is at or after it.
	mid := start + 3e9
	t0 := time.Now()
	c.Playback(foxws.PlaybackRequest{Command: foxws.Play, Speed: 2, Seek: true, SeekTime: mid, RequestID: "seek"})
	st := state("seek")
	if !st.DidSeek || st.Status != foxws.StatusPlaying || st.Speed != 2 || st.CurrentTime < mid-uint64(time.Millisecond) {
		t.Fatalf("after the seek %+v (seek to %d)", st, mid)
	}
	var clock uint64 // the time messages restart at the seek, before its first message
	c.Until(func(m foxwstest.Msg) bool {
		if (m.Op == foxws.OpMessageData || m.Op == foxws.OpTime) && m.LogTime < mid-uint64(50*time.Millisecond) {
			t.Fatalf("message %d at %d after a seek to %d", m.Op, m.LogTime, mid)
		}
		if m.Op == foxws.OpTime {
			clock = m.LogTime
		}
		if m.Op == foxws.OpMessageData && (clock == 0 || clock > m.LogTime+uint64(50*time.Millisecond)) {
			t.Fatalf("message at %d after a seek to %d, the clock at %d", m.LogTime, mid, clock)
		}
		return m.Op == foxws.OpMessageData
	})
	t.Logf("first message %v after the seek request", time.Since(t0))
	// Pause: nothing after the paused position, however long it stays
	// paused (a second request tells when to stop looking).
	c.Playback(foxws.PlaybackRequest{Command: foxws.Pause, Speed: 2, RequestID: "pause"})
	paused := state("pause")
	if paused.Status != foxws.StatusPaused {
		t.Fatalf("pause: %+v", paused)
	}
	time.Sleep(500 * time.Millisecond)
	c.Playback(foxws.PlaybackRequest{Command: foxws.Pause, Speed: 2, RequestID: "still"})
	c.Until(func(m foxwstest.Msg) bool {
		if m.Op == foxws.OpMessageData && m.LogTime > paused.CurrentTime {
			t.Fatalf("data at %d while paused at %d", m.LogTime, paused.CurrentTime)
		}
		return m.Op == foxws.OpPlaybackState && m.State.RequestID == "still"
	})
	// Play to the end at 50x: the end is told without a request id.
	c.Playback(foxws.PlaybackRequest{Command: foxws.Play, Speed: 50, RequestID: "play"})
	if st := state("play"); st.Status != foxws.StatusPlaying || st.Speed != 50 {
		t.Fatalf("play: %+v", st)
	}
	st = state("") // the data still queued comes first
	if st.Status != foxws.StatusEnded || st.CurrentTime != end {
		t.Fatalf("end: %+v, want ended at %d", st, end)
	}
	// A seek back after the end plays again from there (paused until told).
	c.Playback(foxws.PlaybackRequest{Command: foxws.Play, Speed: 50, Seek: true, SeekTime: start, RequestID: "again"})
	if st := state("again"); st.Status != foxws.StatusPlaying || !st.DidSeek {
		t.Fatalf("seek after the end: %+v", st)
	}
	c.Until(func(m foxwstest.Msg) bool { return m.Op == foxws.OpMessageData && m.LogTime < mid })
	c.Close()
}
