package recorder

import "testing"

// TestOverflowGaps: a gap is counted as replaced only when the drain that
// took the sample after it took a full buffer from there on; publisher
// skips, gaps explained by the subscriber's own (counted) drops and
// restarts are not.
func TestOverflowGaps(t *testing.T) {
	o := newOverflow(4)
	type s struct {
		seq, drain     uint64
		index, dropped uint32
	}
	feed := func(xs ...s) (lost uint64) {
		for _, x := range xs {
			lost += added(o.add("p", x.seq, x.drain, x.index, x.dropped, 0, false, 0))
		}
		return lost
	}
	// drain 1: 0 1 2 (short); drain 2: 5 6 7 8 (4 from the gap on: replaced)
	if lost := feed(s{0, 1, 1, 0}, s{1, 1, 2, 0}, s{2, 1, 3, 0}, s{5, 2, 1, 0}, s{6, 2, 2, 0}, s{7, 2, 3, 0}, s{8, 2, 4, 0}); lost != 0 {
		t.Fatalf("decided before drain 2 ended: %d", lost)
	}
	// drain 3: 10 11 (a 1-seq gap in a short drain: a publisher skip)
	if lost := feed(s{10, 3, 1, 0}, s{11, 3, 2, 0}); lost != 2 {
		t.Fatalf("drain 2 replaced %d, want 2 (seqs 3, 4)", lost)
	}
	// drain 4: 12 13 [gap 14-15 at position 3] 16 17 18: 4 samples from the gap on
	if lost := feed(s{12, 4, 1, 0}, s{13, 4, 2, 0}, s{16, 4, 3, 0}, s{17, 4, 4, 0}, s{18, 4, 5, 0}, s{19, 4, 6, 0}); lost != 0 {
		t.Fatalf("drain 3 (a skip) counted %d", lost)
	}
	// drain 5: a gap of 3 of which 2 were dropped by the subscriber (counted
	// there), in a full drain: 1 replaced; then a restart (seq back to 0).
	if lost := feed(s{23, 5, 1, 2}, s{24, 5, 2, 0}, s{25, 5, 3, 0}, s{26, 5, 4, 0}, s{0, 5, 5, 0}); lost != 2 {
		t.Fatalf("drain 4 replaced %d, want 2 (seqs 14, 15)", lost)
	}
	if lost := o.end(nil); lost != 1 {
		t.Fatalf("drain 5 replaced %d, want 1 (of seqs 20-22, two were dropped and counted)", lost)
	}
	// another publisher has its own drains
	if lost := added(o.add("q", 7, 9, 1, 0, 0, false, 0)) + added(o.add("q", 9, 9, 2, 0, 0, false, 0)) + o.end(nil); lost != 0 {
		t.Fatalf("publisher q: %d", lost)
	}
}

// TestOverflowDrainEndsDropped: a drain whose last samples the subscriber
// dropped (no room) is as long as the subscriber says, not as the last
// sample that reached the recorder: at the next drain (PrevDrainLen) and at
// the end of the recording (DrainLen).
func TestOverflowDrainEndsDropped(t *testing.T) {
	o := newOverflow(4)
	// drain 1: seq 0; drain 2: a gap (1, 2 replaced), seq 3 delivered, then
	// three more taken and dropped (positions 2-4), counted elsewhere.
	o.add("p", 0, 1, 1, 0, 0, false, 0)
	o.add("p", 3, 2, 1, 0, 0, false, 0)
	if lost := added(o.add("p", 7, 3, 1, 3, 4, false, 0)); lost != 2 {
		t.Fatalf("drain 2 (4 long) replaced %d, want 2", lost)
	}
	// drain 4: a gap (8 replaced) before seq 9, then three dropped; the
	// recording ends.
	o.add("p", 9, 4, 1, 0, 0, false, 0)
	if lost := o.end(func(string) (uint64, uint32) { return 4, 4 }); lost != 1 {
		t.Fatalf("last drain replaced %d, want 1", lost)
	}
}

// TestOverflowAcrossHold: a gap before the first sample taken after the
// subscriber held (no free slot, samples left in the service's buffer) was
// replaced there, even when the recording stops and takes only a few of the
// buffer's samples: the drain's length proves nothing then.
func TestOverflowAcrossHold(t *testing.T) {
	o := newOverflow(8)
	o.add("p", 0, 1, 1, 0, 0, false, 0)
	o.add("p", 1, 1, 2, 0, 0, false, 0)
	// held; 345 seqs replaced; then 5 samples taken before the end
	lost := added(o.add("p", 347, 1, 3, 0, 0, true, 0))
	for i := uint64(1); i < 5; i++ {
		lost += added(o.add("p", 347+i, 1, uint32(3+i), 0, 0, false, 0))
	}
	lost += o.end(func(string) (uint64, uint32) { return 1, 7 })
	if lost != 345 {
		t.Fatalf("replaced %d, want 345", lost)
	}
	// samples the subscriber took and dropped for want of memory are
	// counted where they were dropped, not again
	o = newOverflow(8)
	o.add("p", 0, 1, 1, 0, 0, false, 0)
	if lost := added(o.add("p", 10, 1, 2, 4, 0, true, 0)) + o.end(nil); lost != 5 {
		t.Fatalf("replaced %d, want 5 (9 missing, 4 dropped and counted)", lost)
	}
}

// added is add's count of replaced samples.
func added(lost uint64, _ *gap) uint64 { return lost }

// A gap decided a drain later (when the publisher's next drain starts) is
// a loss where it lies: at the receive stamp of the sample after it, so a
// snapshot counts it in the window its seq gap is in.
func TestOverflowLostWhereTheGapIs(t *testing.T) {
	o := newOverflow(2)
	o.add("p", 0, 1, 1, 0, 0, false, 100)
	o.add("p", 5, 2, 1, 0, 0, false, 200) // the gap: 1-4, before the sample received at 200
	o.add("p", 6, 2, 2, 0, 0, false, 201)
	if n, _ := o.add("p", 7, 3, 1, 0, 0, false, 900); n != 4 || o.takeLostAt() != 200 {
		t.Fatalf("lost %d; want 4, at 200", n)
	}
	if o.takeLostAt() != 0 {
		t.Fatal("lostAt not reset")
	}
}
