package snapshot

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder/output"
)

// lateRun records states every ms, received 0.1 ms after capture, and
// camera frames every 33 ms, received 5 ms after capture until a backlog
// from capture 5 s on delays them by up to lag; a trigger at 10 s asks 2 s
// before and 1 s after. It returns the snapshot's result and the newest
// frame capture in it, on the capture clock less the epoch.
func lateRun(t *testing.T, lag int64) (Result, int64) {
	return lateRunWith(t, func(c int64) int64 {
		d := 5 * time.Millisecond.Nanoseconds()
		if c >= 5*sec { // the backlog grows, frames arriving ten times slower, to lag
			d += min(lag, (c-5*sec)*9/10)
		}
		return d
	}, nil)
}

// lateRunWith is lateRun with the frames' delay at each capture time
// given, and stall, if set, called before each record is written, with
// the snapshotter and the record's receive stamp; it returns true to leave
// the record out (nothing received then).
func lateRunWith(t *testing.T, delay func(capture int64) int64, stall func(s *Output, recv int64) bool) (Result, int64) {
	t.Helper()
	return snapshotRun(t, func(s *Output) []logfmt.Record {
		ms := int64(time.Millisecond)
		var recs []logfmt.Record
		for c := sec; c <= 20*sec; c += ms {
			recs = append(recs, logfmt.Record{Channel: 1, CaptureNs: epoch + c, HasStamp: true, RecvMonoNs: c + ms/10})
		}
		for c := sec; c <= 20*sec; c += 33 * ms {
			recs = append(recs, logfmt.Record{Channel: 2, CaptureNs: epoch + c, HasStamp: true, RecvMonoNs: c + delay(c)})
		}
		return recs
	}, stall)
}

// epoch is lateRunWith's capture clock: unix ns (receive stamps: mono).
const epoch = int64(1.7e18)

// snapshotRun writes the records recs makes (channels s, c and, internal,
// p) in receive order through a snapshotter asked for 2 s before and 1 s
// after a trigger at 10 s, stall as in lateRunWith; it returns the
// snapshot's result and its newest frame (c) capture, less the epoch.
func snapshotRun(t *testing.T, recs func(s *Output) []logfmt.Record, stall func(s *Output, recv int64) bool) (Result, int64) {
	t.Helper()
	var results []Result
	sc := Config{Before: 2 * time.Second, After: time.Second, MaxBytes: 1 << 30,
		OnSnapshot: func(r Result) { results = append(results, r) }}
	s, err := New(Options{Config: sc, Base: filepath.Join(t.TempDir(), "snap.vrlog"), FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []logfmt.Channel{{Name: "s", Transport: logfmt.TransportZenoh}, {Name: "c", Transport: logfmt.TransportIceoryx2},
		{Name: "p", Transport: logfmt.TransportInternal}} {
		c.Topic = c.Name
		if err := s.Define(&c); err != nil {
			t.Fatal(err)
		}
	}
	all := recs(s)
	sort.SliceStable(all, func(i, j int) bool { return all[i].RecvMonoNs < all[j].RecvMonoNs })
	fired := false
	for i := range all {
		r := &all[i]
		if !fired && r.RecvMonoNs >= 10*sec {
			s.Trigger(Trigger{SnapshotTrigger: logfmt.SnapshotTrigger{Cause: "test", MonoNs: 10 * sec, WallNs: 1e18 + 10*sec}, Slug: "test"})
			fired = true
		}
		r.RecvWallNs = 1e18 + r.RecvMonoNs
		r.Payload = []byte{1}
		if stall != nil && stall(s, r.RecvMonoNs) {
			continue
		}
		if err := s.Write(output.Entry{Record: r, Undecided: s.undecided}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].Err != nil {
		t.Fatalf("results %+v", results)
	}
	rd, err := logfmt.Open(results[0].Path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	it := rd.Records(logfmt.Filter{MetaOnly: true})
	newest := int64(-1)
	for it.Next() {
		if ch, _ := rd.Channel(it.Record().Channel); ch.Name == "c" {
			r := it.Record()
			newest = max(newest, r.CaptureNs-epoch)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return results[0], newest
}

// Frames received 1.2 s late are waited for: the snapshot holds the
// frames captured up to the window's end, and says it was held open.
func TestSnapshotWaitsForLateStream(t *testing.T) {
	res, newest := lateRun(t, 1200*time.Millisecond.Nanoseconds())
	end := 11 * sec
	if newest < end-33*time.Millisecond.Nanoseconds() {
		t.Fatalf("newest frame on time at %.3f s, want the window's end %.3f s", float64(newest)/1e9, float64(end)/1e9)
	}
	if res.LateStream != "c" || res.Late < time.Second || res.Late > 1500*time.Millisecond || res.LateBy < time.Second {
		t.Fatalf("late %v for %q by %v; want about 1.2 s for c", res.Late, res.LateStream, res.LateBy)
	}
	if res.Snapshot.Short != "" || !strings.Contains(res.Snapshot.HeldOpen, "s past its end for c, received up to 1.") {
		t.Fatalf("short %q, held open %q", res.Snapshot.Short, res.Snapshot.HeldOpen)
	}
}

// Frames later than the wait bound are said: what the camera holds after
// the trigger, in capture time.
func TestSnapshotSaysStreamTooLate(t *testing.T) {
	res, newest := lateRun(t, 5*sec)
	if newest >= 11*sec {
		t.Fatalf("newest frame on time at %.3f s: the wait should have ended first", float64(newest)/1e9)
	}
	if !strings.Contains(res.Snapshot.Short, "c holds no record captured after the trigger") || !strings.Contains(res.Snapshot.Short, "waits 3s at most") {
		t.Fatalf("short %q", res.Snapshot.Short)
	}
	t.Log(res.Snapshot.Short)
}

// A camera whose frames are stamped a second before they are sent is a
// second late, not on time: the window waits for the frames captured up
// to its end.
func TestSnapshotWaitsForConstantLag(t *testing.T) {
	res, newest := lateRunWith(t, func(int64) int64 { return sec }, nil)
	if newest < 11*sec-33*time.Millisecond.Nanoseconds() || res.LateStream != "c" || res.Snapshot.HeldOpen == "" {
		t.Fatalf("newest frame captured at %.3f s, held open %q: want the window's end, 11 s", float64(newest)/1e9, res.Snapshot.HeldOpen)
	}
}

// A recorder that stalls (SIGSTOP, or a backlog) 0.5 s before a window's
// end and comes back 1 s after it: the clock's tick does not close the
// window while records still come, and the records received in it are
// in the snapshot.
func TestSnapshotRecorderStalls(t *testing.T) {
	stalled := false
	res, newest := lateRunWith(t, func(int64) int64 { return 5 * time.Millisecond.Nanoseconds() }, func(s *Output, recv int64) bool {
		if stalled || recv < 10500*time.Millisecond.Nanoseconds() {
			return false
		}
		stalled = true
		s.now = func() int64 { return 12 * sec } // the recorder comes back: its clock's tick runs first
		for range 2 {
			if err := s.Tick(s.undecided); err != nil {
				t.Fatal(err)
			}
		}
		return false
	})
	if newest < 11*sec-33*time.Millisecond.Nanoseconds() || res.After < 990*time.Millisecond {
		t.Fatalf("newest frame captured at %.3f s, %.3f s after the trigger: want the window's end, 11 s", float64(newest)/1e9, res.After.Seconds())
	}
}

// Nothing received in the last 0.4 s of a window (both streams silent
// from 10.6 s to 11.2 s) is said, though less than a second: the quickest
// stream's spacing (1 ms) is what counts as no shortfall.
func TestSnapshotSaysSilentTail(t *testing.T) {
	ms := time.Millisecond.Nanoseconds()
	res, _ := lateRunWith(t, func(int64) int64 { return 5 * ms }, func(_ *Output, recv int64) bool {
		return recv > 10600*ms && recv < 11200*ms
	})
	if !strings.Contains(res.Snapshot.Short, "nothing was received in the last 0.4") || res.After > 601*time.Millisecond {
		t.Fatalf("short %q, %v after the trigger: want the silent 0.4 s said", res.Snapshot.Short, res.After)
	}
	res, _ = lateRunWith(t, func(int64) int64 { return 5 * ms }, nil)
	if res.Snapshot.Short != "" {
		t.Fatalf("short %q for a window its streams fill", res.Snapshot.Short)
	}
}

// probes are the recorder's clock probes every 100 ms (channel p, no
// capture stamp), answered while the streams are silent or stalled.
func probes(s *Output) []logfmt.Record {
	var recs []logfmt.Record
	for at := sec; at <= 20*sec; at += 100 * time.Millisecond.Nanoseconds() {
		recs = append(recs, logfmt.Record{Channel: 3, RecvMonoNs: at})
	}
	return recs
}

// The recorder stopped (SIGSTOP) 0.5 s before a window's end and went on
// 1.5 s after it: what the streams sent meanwhile arrives at once, with
// receive stamps past the window's end, after a clock probe answered
// first. The window waits for it: the states and frames captured up to
// its end are in the snapshot.
func TestSnapshotRecorderStopped(t *testing.T) {
	ms := time.Millisecond.Nanoseconds()
	stop, cont := 10500*ms, 12500*ms
	var captured, inWindow int
	res, newest := snapshotRun(t, func(s *Output) []logfmt.Record {
		recs := []logfmt.Record{{Channel: 3, RecvMonoNs: cont}} // the first answer after the stop
		for _, p := range probes(s) {
			if p.RecvMonoNs < stop || p.RecvMonoNs > cont {
				recs = append(recs, p)
			}
		}
		for _, st := range []struct {
			name   string
			id     uint16
			period int64
		}{{"s", 1, ms}, {"c", 2, 33 * ms}} {
			for c := sec; c <= 20*sec; c += st.period {
				recv := c + ms/10
				if recv > stop && recv <= cont { // received once the recorder goes on, in order
					recv = cont + 1 + (c-stop)/1000
				}
				recs = append(recs, logfmt.Record{Channel: st.id, CaptureNs: epoch + c, HasStamp: true, RecvMonoNs: recv})
				if st.name == "s" && c >= 10*sec && c < 11*sec { // on time, received in the window
					captured++
				}
			}
		}
		return recs
	}, nil)
	rd, err := logfmt.Open(res.Path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for it := rd.Records(logfmt.Filter{MetaOnly: true}); it.Next(); {
		if ch, _ := rd.Channel(it.Record().Channel); ch.Name == "s" && it.Record().CaptureNs-epoch >= 10*sec && it.Record().CaptureNs-epoch < 11*sec {
			inWindow++
		}
	}
	if inWindow != captured || newest < 11*sec-33*ms || res.Snapshot.HeldOpen == "" {
		t.Fatalf("%d of %d states captured in the second after the trigger, newest frame %.3f s, held open %q, short %q: want all, 11 s",
			inWindow, captured, float64(newest)/1e9, res.Snapshot.HeldOpen, res.Snapshot.Short)
	}
	t.Logf("held open: %s", res.Snapshot.HeldOpen)
}

// The simulator paused 0.4 s before a window's end, for 2 s, while the
// recorder's clock probes go on: the probes are no data, the window is
// not held open for a stream that is silent, not late, and the silence
// is said.
func TestSnapshotSilentTailWithProbes(t *testing.T) {
	ms := time.Millisecond.Nanoseconds()
	res, _ := snapshotRun(t, func(s *Output) []logfmt.Record {
		recs := probes(s)
		for c := sec; c <= 20*sec; c += ms {
			if c+ms/10 <= 10600*ms || c+ms/10 >= 12600*ms {
				recs = append(recs, logfmt.Record{Channel: 1, CaptureNs: epoch + c, HasStamp: true, RecvMonoNs: c + ms/10})
			}
		}
		return recs
	}, nil)
	if !strings.Contains(res.Snapshot.Short, "s after the trigger of the 1s asked: nothing was received in the last 0.40") || res.Snapshot.HeldOpen != "" {
		t.Fatalf("short %q, held open %q: want the 0.4 s of silence said, the probes in it left out, not held open", res.Snapshot.Short, res.Snapshot.HeldOpen)
	}
}

// Frames 130 ms late (a camera behind a backlog under load), less than a
// window waits by default past its end: the frames captured up to its
// end are in it, the end moved to the last of them.
func TestSnapshotHoldsFramesLateByLittle(t *testing.T) {
	ms := time.Millisecond.Nanoseconds()
	res, newest := lateRunWith(t, func(int64) int64 { return 130 * ms }, nil)
	if newest < 11*sec-33*ms || res.Snapshot.HeldOpen == "" {
		t.Fatalf("newest frame captured at %.3f s, held open %q: want the window's end, 11 s", float64(newest)/1e9, res.Snapshot.HeldOpen)
	}
}

// A seq gap at 10.9 s the recorder decides as its own loss only a drain
// later, at 11.5 s, past the window's end and settle (iceoryx2's safe
// overflow: see overflow): the window waits for the decision, and the
// loss is counted in it.
func TestSnapshotWaitsForUndecidedLoss(t *testing.T) {
	ms := time.Millisecond.Nanoseconds()
	decided := false
	res, _ := lateRunWith(t, func(int64) int64 { return 5 * ms }, func(s *Output, recv int64) bool {
		s.undecided = 10900 * ms
		if decided {
			s.undecided = 0
		}
		if !decided && recv >= 11500*ms {
			decided = true
			s.Drops(2, 3, 10900*ms)
		}
		return false
	})
	if !strings.Contains(res.Snapshot.Short, "3 records lost in the window before the buffer") {
		t.Fatalf("short %q: want the 3 records lost at 10.9 s counted", res.Snapshot.Short)
	}
}
