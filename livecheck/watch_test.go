package livecheck

import (
	"strings"
	"testing"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

func TestParseTrigger(t *testing.T) {
	for _, c := range []struct{ in, check, channel, err string }{
		{in: "max-restarts=0", check: "max-restarts"},
		{in: "max-outage=vr/r1/state=200ms", check: "max-outage", channel: "vr/r1/state"},
		{in: "max-lag=vr/*/camera/*=45ms", check: "max-lag", channel: "vr/*/camera/*"},
		{in: "max-skips", err: "want CHECK=[CHANNEL=]VALUE"},
		{in: "min-rate=24", err: "not decided sample by sample"},
		{in: "max-lag-reject=0.1", err: "not decided sample by sample"},
		{in: "max-drops=0", err: `unknown check "max-drops"`},
		{in: "max-outage=200", err: "want a duration"},
		{in: "max-skips=cam*=0", err: "cam$*"},
	} {
		tr, err := ParseTrigger(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || tr.Check != c.check || tr.Limit.Channel != c.channel || tr.String() != c.in {
			t.Errorf("%s: %+v (%s), %v", c.in, tr, tr, err)
		}
	}
}

// A trigger that applies to no recorded channel says so.
func TestWatchUnwatched(t *testing.T) {
	var trigs []Trigger
	for _, s := range []string{"max-lag=45ms", "max-skips=vr/r9/**=0", "max-outage=1s"} {
		tr, _ := ParseTrigger(s)
		trigs = append(trigs, tr)
	}
	w := NewWatch(trigs, 0)
	c := &logfmt.Channel{Name: "vr/r1/state", Topic: "vr/r1/state", Schema: "vrsdk.State/1"}
	w.Record(c, &logfmt.Record{HasStamp: true, Seq: 1, CaptureNs: 5, RecvMonoNs: 6}, 0)
	u := strings.Join(w.Unwatched(), "\n")
	if !strings.HasPrefix(u, "max-lag=45ms watched nothing: the recording has no frame channel paired") ||
		!strings.Contains(u, "\n"+`max-skips=vr/r9/**=0: "vr/r9/**" matches no channel with seq stamps (there are: vr/r1/state)`) ||
		strings.Contains(u, "max-outage") || strings.Contains(u, "--") { // the check, not a flag: the verb names --snapshot-on

		t.Fatalf("unwatched:\n%s", u)
	}
}

// A stream that stops for good fires max-outage once its silence passes
// the limit (and the outage factor), stamped when it did, judged at the
// latest record received (a recorder's heartbeat), not the clock: records
// still queued in a recorder that is behind are no silence; the sample
// that ends the silence does not fire it again.
func TestWatchSilent(t *testing.T) {
	tr, _ := ParseTrigger("max-outage=200ms")
	w := NewWatch([]Trigger{tr}, 0)
	c := &logfmt.Channel{Name: "vr/r1/state", Topic: "vr/r1/state", Schema: "vrsdk.State/1"}
	hb := &logfmt.Channel{Name: "vrlog/recorder", Topic: "vrlog/recorder", Transport: logfmt.TransportInternal, Schema: codec.SchemaHeartbeat}
	w.Add(hb)
	const ms = int64(1e6)
	var last int64
	for i := int64(1); i <= 100; i++ {
		last = 1000*ms*1000 + i*10*ms
		if f := w.Record(c, &logfmt.Record{HasStamp: true, Seq: uint64(i), CaptureNs: last, RecvMonoNs: last, RecvWallNs: last + 7}, 0); len(f) != 0 {
			t.Fatalf("fired %+v", f)
		}
		w.Record(hb, &logfmt.Record{RecvMonoNs: last, RecvWallNs: last + 7}, 0)
	}
	beat := func(at int64) { w.Record(hb, &logfmt.Record{RecvMonoNs: at, RecvWallNs: at + 7}, 0) }
	beat(last + 150*ms)
	if f := w.Silent(); len(f) != 0 {
		t.Fatalf("fired at 150 ms of silence: %+v", f)
	}
	beat(last + 900*ms)
	f := w.Silent()
	if len(f) != 1 || f[0].Channel != "vr/r1/state" || f[0].RecvMonoNs != last+200*ms || f[0].RecvWallNs != last+200*ms+7 ||
		f[0].Value != 900 || !strings.Contains(f[0].Message, "max-outage vr/r1/state: 900 ms (limit ≤ 200 ms)") {
		t.Fatalf("fired %+v: want max-outage on vr/r1/state stamped at 200 ms of silence", f)
	}
	beat(last + 1900*ms)
	if f := w.Silent(); len(f) != 0 {
		t.Fatalf("fired again: %+v", f)
	}
	back := last + 2000*ms
	if f := w.Record(c, &logfmt.Record{HasStamp: true, Seq: 101, CaptureNs: back, RecvMonoNs: back, RecvWallNs: back}, 0); len(f) != 0 {
		t.Fatalf("the sample ending the silence fired %+v", f)
	}
}

// The recorder's own channel is no subject of a trigger, nor one of the
// channels a trigger's message lists; channels are judged from their
// definition, before their first sample.
func TestWatchUnwatchedLeavesOutTheRecorder(t *testing.T) {
	tr, _ := ParseTrigger("max-outage=vr/r9/**=1s")
	w := NewWatch([]Trigger{tr}, 0)
	w.Add(&logfmt.Channel{Name: "vrlog/recorder", Topic: "vrlog/recorder", Transport: logfmt.TransportInternal, Schema: codec.SchemaHeartbeat})
	w.Add(&logfmt.Channel{Name: "vr/r1/state", Topic: "vr/r1/state", Schema: "vrsdk.State/1"})
	u := strings.Join(w.Unwatched(), "\n")
	if !strings.Contains(u, "(there are: vr/r1/state)") || strings.Contains(u, "vrlog/recorder") {
		t.Fatalf("unwatched: %s", u)
	}
}

// An outage that ends before Silent sees it (Silent runs about once a
// second) fires when its sample comes back, stamped as Silent stamps one:
// when the silence crossed the limit, not when the stream came back.
func TestWatchOutageEndedBeforeSilent(t *testing.T) {
	tr, _ := ParseTrigger("max-outage=200ms")
	w := NewWatch([]Trigger{tr}, 0)
	c := &logfmt.Channel{Name: "vr/r1/state", Topic: "vr/r1/state", Schema: "vrsdk.State/1"}
	const ms = int64(1e6)
	var last int64
	for i := int64(1); i <= 100; i++ {
		last = 1000*ms*1000 + i*10*ms
		if f := w.Record(c, &logfmt.Record{HasStamp: true, Seq: uint64(i), CaptureNs: last, RecvMonoNs: last, RecvWallNs: last + 7}, 0); len(f) != 0 {
			t.Fatalf("fired %+v", f)
		}
	}
	back := last + 700*ms
	f := w.Record(c, &logfmt.Record{HasStamp: true, Seq: 101, CaptureNs: back, RecvMonoNs: back, RecvWallNs: back + 7}, 0)
	if len(f) != 1 || f[0].Check != "max-outage" || f[0].Value != 700 || f[0].RecvMonoNs != last+200*ms || f[0].RecvWallNs != last+200*ms+7 || f[0].CaptureNs != last+200*ms {
		t.Fatalf("fired %+v: want max-outage of 700 ms stamped at 200 ms of silence", f)
	}
}

// A gap the recorder lost (its queue was full) is neither a skip nor an
// outage of the publisher; one larger than the recorder's loss is a skip
// of the rest, and an outage.
func TestWatchRecorderLoss(t *testing.T) {
	ts := []Trigger{}
	for _, s := range []string{"max-skips=0", "max-outage=200ms"} {
		tr, err := ParseTrigger(s)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tr)
	}
	w := NewWatch(ts, 0)
	c := &logfmt.Channel{Name: "vr/r1/state", Topic: "vr/r1/state", Schema: "vrsdk.State/1"}
	const ms = int64(1e6)
	seq, at := uint64(0), 1000*ms*1000
	next := func(skip uint64, dt int64, lost uint64) []Fired {
		seq, at = seq+1+skip, at+dt
		return w.Record(c, &logfmt.Record{HasStamp: true, Seq: seq, CaptureNs: at, RecvMonoNs: at, RecvWallNs: at}, lost)
	}
	for range 100 {
		if f := next(0, 10*ms, 0); len(f) != 0 {
			t.Fatalf("fired %+v", f)
		}
	}
	if f := next(49, 500*ms, 49); len(f) != 0 {
		t.Fatalf("a gap of 49 the recorder lost fired %+v", f)
	}
	if f := next(3, 40*ms, ^uint64(0)); len(f) != 0 {
		t.Fatalf("a gap lost across a hold fired %+v", f)
	}
	for range 10 {
		next(0, 10*ms, 0)
	}
	f := next(49, 500*ms, 40)
	if len(f) != 2 || f[0].Check != "max-skips" || f[0].Value != 9 || f[1].Check != "max-outage" {
		t.Fatalf("a gap of 49 with 40 lost by the recorder fired %+v: want 9 skipped and the outage", f)
	}
	// A later gap: the count is the recording's, as analyze's gate
	// counts it, and the message says what this gap holds.
	next(0, 10*ms, 0)
	if f := next(2, 10*ms, 0); len(f) != 1 || f[0].Value != 11 || !strings.HasSuffix(f[0].Message, "(since the recording started; 2 in this gap)") {
		t.Fatalf("a second gap fired %+v", f)
	}
}

// An undecided gap (iceoryx2's safe overflow, decided when its drain
// ends) fires nothing until it is released as the publisher's, and then
// fires its skip and outage stamped at its record.
func TestWatchUndecidedGap(t *testing.T) {
	var ts []Trigger
	for _, s := range []string{"max-skips=0", "max-outage=200ms"} {
		tr, _ := ParseTrigger(s)
		ts = append(ts, tr)
	}
	w := NewWatch(ts, 0)
	c := &logfmt.Channel{Name: "vr/r1/camera/front", Topic: "vr/r1/camera/front", Schema: codec.SchemaFrame}
	const ms = int64(1e6)
	seq, at := uint64(0), 1000*ms*1000
	next := func(skip uint64, dt int64) ([]Fired, *Held) {
		seq, at = seq+1+skip, at+dt
		return w.RecordUndecided(c, &logfmt.Record{HasStamp: true, Seq: seq, CaptureNs: at, RecvMonoNs: at, RecvWallNs: at + 7}, 0)
	}
	for range 100 {
		if f, h := next(0, 33*ms); len(f) != 0 || h != nil {
			t.Fatalf("fired %+v, held %v", f, h)
		}
	}
	f, lost := next(4, 165*ms) // the recorder's: forgotten
	if len(f) != 0 || lost == nil {
		t.Fatalf("fired %+v, held %v: want it held", f, lost)
	}
	before := at
	f, h := next(9, 330*ms)
	if len(f) != 0 || h == nil {
		t.Fatalf("fired %+v, held %v: want it held", f, h)
	}
	f = w.Release(h)
	if len(f) != 2 || f[0].Check != "max-skips" || f[0].Value != 9 || f[0].RecvMonoNs != at || f[0].RecvWallNs != at+7 ||
		f[1].Check != "max-outage" || f[1].RecvMonoNs != before+200*ms {
		t.Fatalf("released %+v: want 9 skipped stamped at its record, and the outage stamped at 200 ms of silence", f)
	}
}

// Streams that stopped together fire in the order their silences crossed
// the line, not in the order of their names: the first opens the window.
func TestWatchSilentInTimeOrder(t *testing.T) {
	tr, _ := ParseTrigger("max-outage=200ms")
	w := NewWatch([]Trigger{tr}, 0)
	cam := &logfmt.Channel{Name: "vr/r1/camera/front", Topic: "vr/r1/camera/front", Schema: codec.SchemaFrame}
	st := &logfmt.Channel{Name: "vr/r1/state", Topic: "vr/r1/state", Schema: "vrsdk.State/1"}
	const ms = int64(1e6)
	at := 1000 * ms * 1000
	for i := int64(1); i <= 100; i++ {
		st1 := at + i*10*ms
		w.Record(st, &logfmt.Record{HasStamp: true, Seq: uint64(i), CaptureNs: st1, RecvMonoNs: st1, RecvWallNs: st1}, 0)
		if i%2 == 0 {
			c := st1 + 15*ms // the camera's last frame comes after the last state
			w.Record(cam, &logfmt.Record{HasStamp: true, Seq: uint64(i / 2), CaptureNs: c, RecvMonoNs: c, RecvWallNs: c}, 0)
		}
	}
	end := at + 3000*ms
	w.Record(&logfmt.Channel{Name: "vrlog/recorder", Topic: "vrlog/recorder", Transport: logfmt.TransportInternal, Schema: codec.SchemaHeartbeat},
		&logfmt.Record{RecvMonoNs: end, RecvWallNs: end}, 0)
	f := w.Silent()
	if len(f) != 2 || f[0].Channel != "vr/r1/state" || f[1].Channel != "vr/r1/camera/front" || f[0].RecvMonoNs > f[1].RecvMonoNs {
		t.Fatalf("fired %+v: want the state's silence first", f)
	}
}

// A silence fires as soon as it crosses its line, while the stream is
// still silent, when the recorder ticks at the watch's Deadline with its
// queues empty: not at the next heartbeat, and not only when the stream
// comes back (a 10 s limit and a stream back after 10.2 s fired then,
// "extended by max-outage … 10.200 s").
func TestWatchSilenceAtItsDeadline(t *testing.T) {
	tr, _ := ParseTrigger("max-outage=vr/r1/state=10s")
	w := NewWatch([]Trigger{tr}, 0)
	c := &logfmt.Channel{Name: "vr/r1/state", Topic: "vr/r1/state", Schema: "vrsdk.State/1"}
	if _, ok := w.Deadline(); ok {
		t.Fatal("a deadline before any sample")
	}
	const ms = int64(1e6)
	var last int64
	for i := int64(1); i <= 100; i++ {
		last = 1000*ms*1000 + i*40*ms
		w.Record(c, &logfmt.Record{HasStamp: true, Seq: uint64(i), CaptureNs: last, RecvMonoNs: last, RecvWallNs: last + 7}, 0)
	}
	at, ok := w.Deadline()
	if !ok || at != last+10000*ms+1000 {
		t.Fatalf("deadline %d (%v), want 10 s after the last sample", at-last, ok)
	}
	w.Tick(at-2000, at-2000+7) // not yet past the limit
	if f := w.Silent(); len(f) != 0 {
		t.Fatalf("fired before its deadline: %+v", f)
	}
	w.Tick(at, at+7)
	f := w.Silent()
	if len(f) != 1 || f[0].RecvMonoNs != last+10000*ms || f[0].Value != 10000.001 {
		t.Fatalf("at its deadline: %+v", f)
	}
	if _, ok := w.Deadline(); ok {
		t.Fatal("a deadline for a silence that fired")
	}
	back := last + 10200*ms // the stream comes back: it fired already, not again
	if f := w.Record(c, &logfmt.Record{HasStamp: true, Seq: 101, CaptureNs: back, RecvMonoNs: back, RecvWallNs: back}, 0); len(f) != 0 {
		t.Fatalf("fired again when the stream came back: %+v", f)
	}
	if at, ok := w.Deadline(); !ok || at != back+10000*ms+1000 {
		t.Fatalf("the next deadline %d %v", at-back, ok)
	}
}
