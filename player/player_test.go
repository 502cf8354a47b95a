package player

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/schema"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sliceSource replays a fixed list of records each pass.
type sliceSource struct {
	recs  []Rec
	fail  error // returned after the records
	delay time.Duration
}

func (s *sliceSource) Pass(ctx context.Context, emit func(*Rec) bool) error {
	for i := range s.recs {
		if s.delay > 0 {
			time.Sleep(s.delay)
		}
		if !emit(&s.recs[i]) {
			return nil
		}
	}
	return s.fail
}

// call is one Publish seen by the recording sink.
type call struct {
	at       int64
	ch       int
	header   []byte
	payload  []byte
	sourceID []byte
	sn       uint64
	hasSN    bool
}

// recSink records every call with the player's clock (not a transport
// mock: the player is transport-agnostic, this is its whole contract).
type recSink struct {
	now   func() int64
	mu    sync.Mutex
	calls []call
	fail  int // fail on this call (1-based), 0 never
}

func (s *recSink) Publish(r *Rec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 && len(s.calls)+1 == s.fail {
		return errors.New("sink broke")
	}
	s.calls = append(s.calls, call{at: s.now(), ch: r.Channel, header: slices.Clone(r.Header), payload: slices.Clone(r.Payload),
		sourceID: slices.Clone(r.SourceID), sn: r.SourceSN, hasSN: r.HasSourceSN})
	return nil
}

func monoClock() func() int64 {
	base := time.Now()
	return func() int64 { return int64(time.Since(base)) }
}

// states makes n state records on channel 0 every period, and (if
// withFrames) a frame every 3rd tick on channel 1, key = capture time.
func states(n int, period time.Duration, withFrames bool) []Rec {
	var out []Rec
	t0 := int64(1_700_000_000_000_000_000)
	var fseq uint64
	for i := 0; i < n; i++ {
		t := t0 + int64(i)*int64(period)
		s := codec.State{Seq: uint64(i), TNs: t, EstimateTNs: t - 1000, Sensors: []codec.Sensor{{ID: 1, TNs: t - 5}}}
		out = append(out, Rec{Channel: 0, Key: t, CaptureNs: t, Seq: uint64(i), HasStamp: true, Payload: codec.AppendState(nil, &s)})
		if withFrames && i%3 == 0 {
			h := codec.NewFrameHeader(fseq, t, 1, 4, 2, codec.RGB8)
			out = append(out, Rec{Channel: 1, Key: t + int64(period)/2, CaptureNs: t, Seq: fseq, HasStamp: true,
				Header: codec.AppendFrameHeader(nil, &h), Payload: bytes.Repeat([]byte{byte(fseq)}, 24)})
			fseq++
		}
	}
	return out
}

var chans = []Channel{{Name: "state", Schema: codec.SchemaState}, {Name: "frame", Schema: codec.SchemaFrame, Frame: true}, {Name: "raw"}}

func play(t *testing.T, recs []Rec, o Options) (*Summary, *recSink) {
	t.Helper()
	if o.Now == nil {
		o.Now = monoClock()
	}
	if o.Channels == nil {
		o.Channels = chans
	}
	sink := &recSink{now: o.Now}
	p, err := New(&sliceSource{recs: recs}, sink, o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s, sink
}

func TestPacingFollowsKeys(t *testing.T) {
	recs := states(150, 2*time.Millisecond, true)
	s, sink := play(t, recs, Options{Loops: 1})
	if len(sink.calls) != len(recs) {
		t.Fatalf("sent %d of %d", len(sink.calls), len(recs))
	}
	var worst int64
	for _, c := range s.Channels {
		worst = max(worst, c.Err.Max())
	}
	for i, c := range sink.calls {
		if c.ch != recs[i].Channel || !bytes.Equal(c.payload, recs[i].Payload) || !bytes.Equal(c.header, recs[i].Header) {
			t.Fatalf("call %d: not record %d", i, i)
		}
		// Relative to the first call, each call is where the key says, within
		// the measured error (+ the first call's own error and the time
		// between the clock reading and the sink's own reading).
		want := recs[i].Key - recs[0].Key
		got := c.at - sink.calls[0].at
		if d := got - want; d < -worst-100_000 || d > worst+100_000 {
			t.Fatalf("call %d at +%v, want +%v (max error %v)", i, time.Duration(got), time.Duration(want), time.Duration(worst))
		}
	}
	if s.Channels[0].Sent != 150 || s.Channels[1].Sent != 50 || s.Channels[0].Err.Count() != 150 {
		t.Fatalf("stats %+v", s.Channels[:2])
	}
	t.Logf("error p50 %v p99 %v max %v, margin %v", time.Duration(s.Channels[0].Err.Quantile(.5)),
		time.Duration(s.Channels[0].Err.Quantile(.99)), time.Duration(worst), s.SpinMargin)
}

// within: elapsed (first to last publish) is want, give or take the spread
// of the measured timing errors (each publish is late by its error).
func within(t *testing.T, what string, s *Summary, want time.Duration) {
	t.Helper()
	h := &s.Channels[0].Err
	slack := time.Duration(h.Max()-h.Min()) + time.Millisecond
	if d := s.Elapsed - want; d < -slack || d > slack {
		t.Fatalf("%s took %v, want %v ± %v", what, s.Elapsed, want, slack)
	}
}

func TestRateHalvesDuration(t *testing.T) {
	recs := states(101, 4*time.Millisecond, false) // 400 ms
	s1, _ := play(t, recs, Options{Loops: 1})
	s2, _ := play(t, recs, Options{Loops: 1, Rate: 2})
	within(t, "1x", s1, 400*time.Millisecond)
	within(t, "2x", s2, 200*time.Millisecond)
}

func TestLoopRepeatsWithPeriod(t *testing.T) {
	recs := states(10, 5*time.Millisecond, false) // span 45 ms, period 50 ms
	s, sink := play(t, recs, Options{Loops: 3})
	if len(sink.calls) != 30 || s.Passes != 3 {
		t.Fatalf("sent %d in %d passes", len(sink.calls), s.Passes)
	}
	for i, c := range sink.calls {
		if !bytes.Equal(c.payload, recs[i%10].Payload) {
			t.Fatalf("call %d is not record %d", i, i%10)
		}
	}
	h := &s.Channels[0].Err
	slack := h.Max() - h.Min() + int64(time.Millisecond)
	if d := sink.calls[10].at - sink.calls[0].at - int64(50*time.Millisecond); d < -slack || d > slack {
		t.Fatalf("loop period off by %v, want 50ms ± %v", time.Duration(d), time.Duration(slack))
	}
}

func TestRateMaxKeepsOrderAcrossChannels(t *testing.T) {
	recs := states(3000, time.Millisecond, true)
	s, sink := play(t, recs, Options{Loops: 1, RateMax: true, MaxQueueMsgs: 64})
	if len(sink.calls) != len(recs) {
		t.Fatalf("sent %d", len(sink.calls))
	}
	for i, c := range sink.calls {
		if c.ch != recs[i].Channel || !bytes.Equal(c.payload, recs[i].Payload) {
			t.Fatalf("call %d out of order", i)
		}
	}
	if s.Elapsed > time.Second || s.Channels[0].Err.Count() != 0 || s.PeakQueueMsgs > 64 {
		t.Fatalf("rate max took %v, %d error samples, peak queue %d", s.Elapsed, s.Channels[0].Err.Count(), s.PeakQueueMsgs)
	}
}

func TestQueueBoundedByBytesAndTime(t *testing.T) {
	recs := states(2000, time.Millisecond, false) // 200 B each
	s, _ := play(t, recs, Options{Loops: 1, RateMax: true, MaxQueueBytes: 10_000})
	if s.PeakQueueBytes > 10_000 {
		t.Fatalf("queue held %d bytes", s.PeakQueueBytes)
	}
	s, _ = play(t, recs[:300], Options{Loops: 1, ReadAhead: 20 * time.Millisecond})
	if s.PeakQueueMsgs > 22 {
		t.Fatalf("read-ahead of 20 ms at 1 kHz held %d records", s.PeakQueueMsgs)
	}
}

func seqs(t *testing.T, calls []call, ch int) []uint64 {
	var out []uint64
	for _, c := range calls {
		if c.ch != ch {
			continue
		}
		var seq uint64
		var err error
		if ch == 0 {
			seq, _, err = codec.StateStamp(c.payload)
		} else {
			seq, _, err = codec.FrameStamp(c.header)
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, seq)
	}
	return out
}

func TestDropIsSeededAndCounted(t *testing.T) {
	recs := states(2000, 0, true)
	o := Options{Loops: 1, RateMax: true, Seed: 7, Faults: Faults{Drop: 0.1}}
	s1, a := play(t, recs, o)
	_, b := play(t, recs, o)
	o.Seed = 8
	_, c := play(t, recs, o)
	sa, sb, sc := seqs(t, a.calls, 0), seqs(t, b.calls, 0), seqs(t, c.calls, 0)
	if !slices.Equal(sa, sb) {
		t.Fatal("same seed, different drops")
	}
	if slices.Equal(sa, sc) {
		t.Fatal("different seeds, same drops")
	}
	// Gaps seen by a subscriber add up to the reported drops.
	var skipped uint64
	last := uint64(0)
	for i, q := range sa {
		if i == 0 {
			skipped += q
		} else {
			skipped += codec.Skipped(last, q)
		}
		last = q
	}
	skipped += 1999 - last
	d := s1.Channels[0].Dropped
	if skipped != d || d < 140 || d > 260 { // binomial(2000, 0.1): 200 ± 4.5 sigma
		t.Fatalf("dropped %d, gaps %d", d, skipped)
	}
}

func TestOutageAndRestart(t *testing.T) {
	recs := states(100, 10*time.Millisecond, false)
	f := Faults{Outages: []Outage{{At: 200 * time.Millisecond, For: 300 * time.Millisecond}}, RestartAt: 500 * time.Millisecond}
	s, sink := play(t, recs, Options{Loops: 1, RateMax: true, Faults: f})
	got := seqs(t, sink.calls, 0)
	var want []uint64
	for i := 0; i < 20; i++ {
		want = append(want, uint64(i))
	}
	for i := 50; i < 100; i++ {
		want = append(want, uint64(i-50))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("seqs %v", got)
	}
	if s.Channels[0].OutageSkip != 30 || s.Channels[0].Reseq != 50 {
		t.Fatalf("stats %+v", s.Channels[0])
	}
	// Only seq changed.
	for i, c := range sink.calls[20:] {
		orig := slices.Clone(recs[50+i].Payload)
		binary.LittleEndian.PutUint64(orig[8:], uint64(i))
		if !bytes.Equal(orig, c.payload) {
			t.Fatalf("record %d: more than seq changed", 50+i)
		}
	}
}

// Source info reaches the sink as recorded (copied: the source reuses its
// buffers); restart=AT counts a raw channel's source sn from 0 again, and a
// restart the log has by itself after AT is left as it is; drawn drops
// inside an outage count as dropped, not as outage skips.
func TestSourceInfoAndRestart(t *testing.T) {
	var recs []Rec
	id := []byte{9, 8, 7, 6, 5, 4, 3, 2, 1}
	sn := uint64(1000)
	for i := 0; i < 100; i++ {
		switch i {
		case 30:
			sn += 5 // the original's skips
		case 70:
			sn, id = 0, []byte{1, 1, 1, 1, 1} // the original's own restart (a new publisher)
		}
		recs = append(recs, Rec{Channel: 2, Key: int64(i) * 1e7, SourceID: id, SourceSN: sn, HasSourceSN: true, Payload: []byte{byte(i)}})
		sn++
	}
	reused := &reusingSource{recs: recs}
	f := Faults{RestartAt: 500 * time.Millisecond}
	o := Options{Loops: 1, RateMax: true, Faults: f, Channels: chans, Now: monoClock()}
	sink := &recSink{now: o.Now}
	p, _ := New(reused, sink, o)
	st, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(sink.calls) != 100 || st.Channels[2].Reseq != 20 {
		t.Fatalf("%d calls, reseq %d", len(sink.calls), st.Channels[2].Reseq)
	}
	for i, c := range sink.calls {
		want := recs[i].SourceSN
		if i >= 50 && i < 70 {
			want -= recs[50].SourceSN // restarted at 0.5 s
		}
		if !c.hasSN || c.sn != want || !bytes.Equal(c.sourceID, recs[i].SourceID) || c.payload[0] != byte(i) {
			t.Fatalf("record %d: source %x sn %d (%v), want %x sn %d", i, c.sourceID, c.sn, c.hasSN, recs[i].SourceID, want)
		}
	}
	// drop=1 inside an outage: every record drawn is dropped first.
	s, _ := play(t, states(50, 10*time.Millisecond, false), Options{Loops: 1, RateMax: true,
		Faults: Faults{Drop: 1, Outages: []Outage{{At: 100 * time.Millisecond, For: 200 * time.Millisecond}}}})
	if s.Channels[0].Dropped != 50 || s.Channels[0].OutageSkip != 0 {
		t.Fatalf("drop inside an outage: %+v", s.Channels[0])
	}
}

// reusingSource emits every record from one buffer that it overwrites, as
// the log iterator does.
type reusingSource struct{ recs []Rec }

func (s *reusingSource) Pass(ctx context.Context, emit func(*Rec) bool) error {
	var r Rec
	buf := make([]byte, 64)
	for _, x := range s.recs {
		r = x
		r.SourceID = append(buf[:0], x.SourceID...)
		r.Payload = append(buf[32:32], x.Payload...)
		if !emit(&r) {
			return nil
		}
		clear(buf)
	}
	return nil
}

func TestRestampShiftsByOneConstant(t *testing.T) {
	recs := states(30, time.Millisecond, true)
	recs = append(recs, Rec{Channel: 2, Key: recs[len(recs)-1].Key + 1, Payload: []byte("raw bytes, not a state")})
	var wall int64 = 2_000_000_000_000_000_000
	s, sink := play(t, recs, Options{Loops: 1, Restamp: true, WallNow: func() int64 { return wall }})
	if !s.HasRestamp {
		t.Fatal("no restamp delta")
	}
	d := s.RestampDelta
	if got := recs[0].CaptureNs + d; got < wall-int64(time.Millisecond) || got > wall+int64(time.Millisecond) {
		t.Fatalf("first capture maps to %d, want ~%d", got, wall)
	}
	for i, c := range sink.calls {
		r := recs[i]
		switch r.Channel {
		case 0:
			want := slices.Clone(r.Payload)
			if err := codec.ShiftState(want, d); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(want, c.payload) {
				t.Fatalf("state %d not shifted by %d", i, d)
			}
			st, _ := codec.DecodeState(c.payload, 0)
			if st.Seq != r.Seq || st.TNs != r.CaptureNs+d {
				t.Fatalf("state %d: seq %d t %d", i, st.Seq, st.TNs)
			}
		case 1:
			h, _ := codec.DecodeFrameHeader(c.header, 0)
			if h.TNs != r.CaptureNs+d || h.Seq != r.Seq || !bytes.Equal(c.payload, r.Payload) {
				t.Fatalf("frame %d: %+v", i, h)
			}
		case 2:
			if !bytes.Equal(c.payload, r.Payload) {
				t.Fatal("raw payload changed")
			}
		}
	}
}

func TestLagDelaysFramesOnly(t *testing.T) {
	recs := states(60, 2*time.Millisecond, true)
	lag := 5 * time.Millisecond
	s, sink := play(t, recs, Options{Loops: 1, Faults: Faults{Lag: lag}})
	// Each frame is published ~lag after the state it used to follow.
	var stateAt []int64
	for _, c := range sink.calls {
		if c.ch == 0 {
			stateAt = append(stateAt, c.at)
		}
	}
	var worst int64
	for _, c := range s.Channels {
		worst = max(worst, c.Err.Max())
	}
	fi := 0
	for _, c := range sink.calls {
		if c.ch != 1 {
			continue
		}
		want := stateAt[fi*3] + int64(time.Millisecond) + int64(lag) // frame key = state key + period/2
		if d := c.at - want; d < -worst-200_000 || d > worst+200_000 {
			t.Fatalf("frame %d at %v from its state, want %v", fi, time.Duration(c.at-stateAt[fi*3]), time.Duration(want-stateAt[fi*3]))
		}
		fi++
	}
	if fi != 20 {
		t.Fatalf("%d frames", fi)
	}
}

func TestJitterKeepsPerChannelOrder(t *testing.T) {
	recs := states(200, 500*time.Microsecond, true)
	_, sink := play(t, recs, Options{Loops: 1, Seed: 3, Faults: Faults{Jitter: time.Millisecond}})
	for ch := 0; ch < 2; ch++ {
		got := seqs(t, sink.calls, ch)
		if !slices.IsSorted(got) || len(got) == 0 {
			t.Fatalf("channel %d reordered", ch)
		}
	}
	if len(sink.calls) != len(recs) {
		t.Fatalf("sent %d", len(sink.calls))
	}
}

func TestPauseStepResume(t *testing.T) {
	recs := states(20, time.Millisecond, false)
	now := monoClock()
	sink := &recSink{now: now}
	p, err := New(&sliceSource{recs: recs}, sink, Options{Loops: 1, StartPaused: true, Channels: chans, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *Summary)
	go func() {
		s, err := p.Run(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()
	count := func() int { sink.mu.Lock(); defer sink.mu.Unlock(); return len(sink.calls) }
	time.Sleep(50 * time.Millisecond)
	if n := count(); n != 0 {
		t.Fatalf("published %d while paused", n)
	}
	p.Step()
	p.Step()
	waitFor(t, func() bool { return count() == 2 })
	time.Sleep(30 * time.Millisecond)
	if n := count(); n != 2 {
		t.Fatalf("published %d after two steps", n)
	}
	if !p.Status().Paused {
		t.Fatal("not paused")
	}
	p.Resume()
	s := <-done
	if s.Channels[0].Sent != 20 || s.Channels[0].Steps != 2 || s.Channels[0].Err.Count() != 18 {
		t.Fatalf("stats %+v", s.Channels[0])
	}
}

func waitFor(t *testing.T, f func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if f() {
			return
		}
	}
	t.Fatal("timed out")
}

func TestSetRateMidway(t *testing.T) {
	recs := states(201, time.Millisecond, false) // 200 ms at 1x
	now := monoClock()
	var p *Player
	n := 0
	sink := SinkFunc(func(*Rec) error {
		if n++; n == 101 {
			p.SetRate(4) // after record 100 (100 ms of log)
		}
		return nil
	})
	p, _ = New(&sliceSource{recs: recs}, sink, Options{Loops: 1, Channels: chans, Now: now})
	s, err := p.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 100 ms at 1x, then the other 100 ms of log at 4x: 125 ms, and more
	// by as much as the rate change takes to reach the pacing loop (a
	// request between two records: a few ms on a loaded machine under the
	// race detector). Not changed at all: 200 ms; from the start: 50 ms.
	h := &s.Channels[0].Err
	slack := time.Duration(h.Max()-h.Min()) + time.Millisecond
	if s.Elapsed < 125*time.Millisecond-slack || s.Elapsed > 150*time.Millisecond+slack {
		t.Fatalf("1x then 4x took %v, want 125 ms (-%v, +25 ms)", s.Elapsed, slack)
	}
}

func TestStopAndCancel(t *testing.T) {
	recs := states(1000, time.Millisecond, false)
	sent := make(chan struct{}, 1)
	p, _ := New(&sliceSource{recs: recs}, SinkFunc(func(*Rec) error {
		select {
		case sent <- struct{}{}:
		default:
		}
		return nil
	}), Options{Loops: 0, Channels: chans})
	go func() { <-sent; time.Sleep(10 * time.Millisecond); p.Stop() }() // stopped while playing, however loaded the machine
	s, err := p.Run(context.Background())
	if err != nil || !s.Interrupted || s.Channels[0].Sent == 0 {
		t.Fatalf("stop: %v; interrupted %v, sent %d", err, s.Interrupted, s.Channels[0].Sent)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	p, _ = New(&sliceSource{recs: recs}, SinkFunc(func(*Rec) error { return nil }), Options{Loops: 0, Channels: chans})
	s, err = p.Run(ctx)
	if err != nil || !s.Interrupted {
		t.Fatalf("cancel: %v; interrupted %v", err, s.Interrupted)
	}
}

func TestSourceAndSinkErrors(t *testing.T) {
	boom := errors.New("corrupt chunk")
	recs := states(10, 0, false)
	sink := &recSink{now: monoClock()}
	p, _ := New(&sliceSource{recs: recs, fail: boom}, sink, Options{Loops: 1, Channels: chans, RateMax: true})
	s, err := p.Run(context.Background())
	if !errors.Is(err, boom) || s.Channels[0].Sent != 10 {
		t.Fatalf("source error: %v, sent %d", err, s.Channels[0].Sent)
	}
	sink = &recSink{now: monoClock(), fail: 4}
	p, _ = New(&sliceSource{recs: recs}, sink, Options{Loops: 1, Channels: chans, RateMax: true})
	s, err = p.Run(context.Background())
	if err == nil || s.Channels[0].Sent != 3 {
		t.Fatalf("sink error: %v, sent %d", err, s.Channels[0].Sent)
	}
}

func TestParseInject(t *testing.T) {
	var f Faults
	for _, s := range []string{"drop=0.1", "outage=2:1.5", "outage=10s:500ms", "restart=3", "jitter=200us", "lag=-0.005"} {
		if err := f.ParseInject(s); err != nil {
			t.Fatal(err)
		}
	}
	want := Faults{Drop: 0.1, Outages: []Outage{{2 * time.Second, 1500 * time.Millisecond}, {10 * time.Second, 500 * time.Millisecond}},
		RestartAt: 3 * time.Second, Jitter: 200 * time.Microsecond, Lag: -5 * time.Millisecond}
	if fmt.Sprint(f) != fmt.Sprint(want) {
		t.Fatalf("%+v", f)
	}
	for _, s := range []string{"drop", "drop=2", "outage=1", "restart=-1", "jitter=x", "nope=1"} {
		if err := f.ParseInject(s); !errors.Is(err, ErrBadInject) {
			t.Fatalf("%q: %v", s, err)
		}
	}
}

// A window of one record lasts 0 s: no fault is then "after its end"
// unless one was asked for there, and the record is played.
func TestOneRecordWindow(t *testing.T) {
	var none Faults
	if err := none.Within(0); err != nil {
		t.Fatalf("no fault asked for: %v", err)
	}
	f := Faults{Outages: []Outage{{At: 0, For: time.Second}}}
	if err := f.Within(0); err != nil {
		t.Fatalf("an outage at the one record's instant: %v", err)
	}
	f = Faults{RestartAt: time.Second}
	if err := f.Within(0); err == nil {
		t.Fatal("a restart after a 0 s window was accepted")
	}
	recs := states(1, time.Millisecond, false)
	var got int
	p, err := New(&sliceSource{recs: recs}, SinkFunc(func(*Rec) error { got++; return nil }), Options{Loops: 1, Channels: chans})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := p.Run(context.Background()); err != nil || got != 1 || s.Channels[0].Sent != 1 {
		t.Fatalf("sent %d: %v", got, err)
	}
}

// A declared schema's stamp that grows when shifted (a JSON number of
// more digits) is published from the resized copy (codec.Resizer).
func TestRestampDeclaredResized(t *testing.T) {
	d, err := schema.Parse(`team/cmd json stamp=t seq=n`, ".", "test")
	if err != nil {
		t.Fatal(err)
	}
	cd, err := schema.Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	var recs []Rec
	for i := range 20 {
		t := int64(1000 + i*10)
		recs = append(recs, Rec{Channel: 0, Key: int64(i) * int64(time.Millisecond), CaptureNs: t, Seq: uint64(i), HasStamp: true,
			Payload: []byte(fmt.Sprintf(`{"n": %d, "t": %d, "v": "x"}`, i, t))})
	}
	var wall int64 = 2_000_000_000_000_000_000
	s, sink := play(t, recs, Options{Loops: 1, Restamp: true, WallNow: func() int64 { return wall },
		Channels: []Channel{{Name: "team/cmd", Schema: d.Name, Codec: cd}}})
	if s.Channels[0].RestampErr != 0 || len(sink.calls) != len(recs) {
		t.Fatalf("restamp errors %d, %d published", s.Channels[0].RestampErr, len(sink.calls))
	}
	for i, c := range sink.calls {
		var m struct{ N, T int64 }
		if err := json.Unmarshal(c.payload, &m); err != nil || m.T != recs[i].CaptureNs+s.RestampDelta || m.N != int64(i) {
			t.Fatalf("record %d published %s (%v), want t %d", i, c.payload, err, recs[i].CaptureNs+s.RestampDelta)
		}
	}
}
