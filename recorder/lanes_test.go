package recorder

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder/output"
)

// orderSink records what the writer hands it, in order.
type orderSink struct {
	ids    map[string]uint16
	names  []string
	writes []string // "name mono", and "seal"
	drops  map[string]uint64
	booked []string // "name n at mono ms, after write i"
}

func (s *orderSink) Define(d *logfmt.Channel) error {
	s.names = append(s.names, d.Name)
	s.ids[d.Name] = uint16(len(s.names))
	return nil
}
func (s *orderSink) Drops(ch uint16, n uint64, at int64) {
	name := s.names[ch-1]
	s.drops[name] += n
	s.booked = append(s.booked, fmt.Sprintf("%s %d at %d, after %d writes", name, n, at/int64(time.Millisecond), len(s.writes)))
}
func (s *orderSink) Write(e output.Entry) error {
	r := e.Record
	s.writes = append(s.writes, fmt.Sprintf("%s %d", s.names[r.Channel-1], r.RecvMonoNs/int64(time.Millisecond)))
	if e.Release != nil {
		e.Release()
	}
	return nil
}
func (s *orderSink) Seal(bool) error           { s.writes = append(s.writes, "seal"); return nil }
func (s *orderSink) Busy() bool                { return false }
func (s *orderSink) Tick(int64) error          { return nil }
func (s *orderSink) Close() error              { return nil }
func (s *orderSink) Progress() output.Progress { return output.Progress{} }

// testWriter is a writer stage into out, its lanes open.
func testWriter(out output.Output) *writer {
	cfg := &Config{DrainTimeout: -1}
	return &writer{cfg: cfg, out: out, lanes: newLanes(false), books: newBooks(cfg, nil, &subscriptions{}), cmds: make(chan command),
		ended: new(atomic.Int64), cancel: func() {}, status: func() {}}
}

func testItem(name string, ms int64, size int) sample {
	return sample{name: name, topic: name, transport: logfmt.TransportZenoh, rec: logfmt.Record{RecvMonoNs: ms * int64(time.Millisecond), Payload: make([]byte, size)}}
}

// A channel moves to the bulk lane at its first large record, for good;
// each lane keeps its items in order.
func TestLanesSplit(t *testing.T) {
	l := newLanes(false)
	small, bulk := l.split(batch{samples: []sample{testItem("state", 1, 200), testItem("cam", 2, bulkMin), testItem("state", 3, 200), testItem("cam", 4, 10)}})
	if len(small.samples) != 2 || small.samples[0].rec.RecvMonoNs != 1e6 || small.samples[1].rec.RecvMonoNs != 3e6 || len(bulk.samples) != 2 || bulk.samples[1].rec.RecvMonoNs != 4e6 {
		t.Fatalf("split: small %v, bulk %v", small, bulk)
	}
	if small, bulk = l.split(batch{samples: []sample{testItem("cam", 5, 10)}}); len(bulk.samples) != 1 || !small.empty() {
		t.Fatal("a small record of a bulk channel left the bulk lane")
	}
	if small, bulk = l.split(batch{end: &streamEnd{name: "cam"}}); bulk.end == nil || !small.empty() {
		t.Fatal("a stream's end must follow its channel's records")
	}
	if small, bulk = l.split(batch{failed: &failure{name: "gone"}}); small.failed == nil || !bulk.empty() {
		t.Fatal("a channel error goes small")
	}
	one := newLanes(true)
	if small, bulk = one.split(batch{samples: []sample{testItem("state", 1, 200)}}); !small.empty() || len(bulk.samples) != 1 {
		t.Fatal("snapshot mode keeps one lane")
	}
}

// Behind a backlog of frames, states are written first, each channel in
// receive order, and the writer seals the open chunk where the lanes
// switch with a jump in time; a channel that becomes bulk has its waiting
// small records written before its first bulk one.
func TestWriterServesSmallFirst(t *testing.T) {
	out := &orderSink{ids: map[string]uint16{}, drops: map[string]uint64{}}
	w := testWriter(out)
	w.lanes.wait = 0 // small records go before every bulk one
	w.lanes.bulk <- batch{samples: []sample{testItem("cam", 0, bulkMin), testItem("cam", 10, bulkMin)}}
	w.lanes.small <- batch{samples: []sample{testItem("state", 500, 200), testItem("state", 501, 200)}}
	w.lanes.put(batch{samples: []sample{testItem("grows", 502, 10)}})
	w.lanes.put(batch{samples: []sample{testItem("grows", 503, bulkMin), testItem("cam", 20, bulkMin)}})
	w.lanes.close()
	if err := w.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, w := range out.writes {
		pos[w] = i
	}
	for _, w := range []string{"cam 0", "cam 10", "cam 20", "state 500", "state 501", "grows 502", "grows 503"} {
		if _, ok := pos[w]; !ok {
			t.Fatalf("%s not written: %v", w, out.writes)
		}
	}
	ordered := func(a, b string) {
		if pos[a] > pos[b] {
			t.Fatalf("%s written after %s: %v", a, b, out.writes)
		}
	}
	ordered("cam 0", "cam 10")
	ordered("cam 10", "cam 20")
	ordered("state 500", "state 501")
	ordered("grows 502", "grows 503")
	ordered("state 501", "cam 0") // served before the backlog
	for i, w := range out.writes[1:] {
		prev := out.writes[i]
		if prev != "seal" && w != "seal" && (prev[:3] == "cam" || prev == "grows 503") != (w[:3] == "cam" || w == "grows 503") {
			t.Fatalf("lanes switched from %q to %q, 500 ms apart, without a seal: %v", prev, w, out.writes)
		}
	}
}

// Once the drain is cut off, what is still queued is dropped and counted
// on its channel, a new channel included, and nothing more is written.
func TestDrainCutOffCounts(t *testing.T) {
	out := &orderSink{ids: map[string]uint16{}, drops: map[string]uint64{}}
	w := testWriter(out)
	w.cfg.DrainTimeout = time.Millisecond
	released := 0
	b := []sample{testItem("cam", 0, bulkMin), testItem("state", 1, 200), testItem("new", 2, 200)}
	for i := range b {
		b[i].release = func() { released++ }
	}
	w.lanes.put(batch{samples: b})
	w.lanes.close()
	w.ended.Store(time.Now().Add(-time.Second).UnixNano())
	if err := w.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(out.writes) != 0 || released != 3 || w.books.drainDrops != 3 {
		t.Fatalf("writes %v, %d released, %d drain drops", out.writes, released, w.books.drainDrops)
	}
	for _, n := range []string{"cam", "state", "new"} {
		if out.drops[n] != 1 || w.books.chans[n] == nil || w.books.chans[n].drops != 1 {
			t.Fatalf("%s: %d drops in the log, channel %v", n, out.drops[n], w.books.chans[n])
		}
	}
}

// A subscription's queue drops are booked right after the batch whose
// end the counter was read at, stamped with its last record's receive
// time (where the queue, full, dropped them), not when the writer gets
// round to reading the counter; what the counter says after the last
// batch is booked at the end.
func TestQueueDropsBookedAfterTheirBatch(t *testing.T) {
	out := &orderSink{ids: map[string]uint16{}, drops: map[string]uint64{}}
	w := testWriter(out)
	count := uint64(9)
	si := &subInfo{name: "state", dropped: func() uint64 { return count }, last: "state"}
	w.books.subs.add(si)
	first := []sample{testItem("state", 1, 200), testItem("state", 2, 200)}
	second := []sample{testItem("state", 3000, 200)}
	for _, b := range [][]sample{first, second} {
		for i := range b {
			b[i].sub = si
		}
	}
	first[1].dropsAfter = 5  // dropped while the queue held 1 and 2
	second[0].dropsAfter = 5 // nothing more by then
	w.lanes.put(batch{samples: first})
	w.lanes.put(batch{samples: second})
	w.lanes.close()
	if err := w.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"state 5 at 2, after 2 writes", "state 4 at 0, after 3 writes"} // 4 more counted after the last batch
	if fmt.Sprint(out.booked) != fmt.Sprint(want) || w.books.chans["state"].drops != 9 || out.drops["state"] != 9 {
		t.Fatalf("booked %q, channel drops %d: want %q, 9", out.booked, w.books.chans["state"].drops, want)
	}
}

// seenView records what a View is shown.
type seenView struct{ seen []string }

func (v *seenView) Channel(c *logfmt.Channel) { v.seen = append(v.seen, "channel "+c.Name) }
func (v *seenView) Record(r *logfmt.Record) {
	v.seen = append(v.seen, fmt.Sprintf("record %d %d", r.Channel, r.RecvMonoNs/int64(time.Millisecond)))
}

// A live view sees each channel before its records, and every record,
// written or withheld while paused, before the output takes it.
func TestViewSeesEveryRecord(t *testing.T) {
	out := &orderSink{ids: map[string]uint16{}, drops: map[string]uint64{}}
	w := testWriter(out)
	v := &seenView{}
	w.cfg.View = v
	w.lanes.put(batch{samples: []sample{testItem("state", 1, 200), testItem("state", 3, 200)}})
	w.lanes.close()
	w.pause = &pause{fromMono: int64(2 * time.Millisecond), mark: map[string]uint64{}} // the second was received during it
	if err := w.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(v.seen) < 3 || fmt.Sprint(v.seen[:3]) != "[channel state record 1 1 record 1 3]" { // then the pause's own record, at the end

		t.Fatalf("the view saw %v", v.seen)
	}
	if len(out.writes) == 0 || out.writes[0] != "state 1" || slices.Contains(out.writes, "state 3") {
		t.Fatalf("written %v: want the record before the pause, not the one in it", out.writes)
	}
}
