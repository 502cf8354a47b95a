package snapshot

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder/output"
)

// snapRun drives a snapshotter with synthetic records (one every step of
// receive time, of size bytes) from mono 1 s to end, firing triggers at
// their times, and returns what it wrote.
type snapRun struct {
	t       *testing.T
	s       *Output
	results []Result
	peak    int64
}

func newSnapRun(t *testing.T, sc Config) *snapRun {
	r := &snapRun{t: t}
	sc.OnSnapshot = func(res Result) { r.results = append(r.results, res) }
	s, err := New(Options{Config: sc, Base: filepath.Join(t.TempDir(), "snap.vrlog"), FlushInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Define(&logfmt.Channel{Name: "a", Transport: logfmt.TransportZenoh, Topic: "a"}); err != nil {
		t.Fatal(err)
	}
	r.s = s
	return r
}

const sec = int64(time.Second)

func (r *snapRun) run(step, end int64, size int, triggers ...int64) {
	payload := make([]byte, size)
	rng := rand.NewChaCha8([32]byte{1})
	for mono := sec; mono <= end; mono += step {
		rng.Read(payload) // incompressible
		for len(triggers) > 0 && triggers[0] <= mono {
			r.s.Trigger(Trigger{SnapshotTrigger: logfmt.SnapshotTrigger{Cause: "test", MonoNs: triggers[0], WallNs: 1e18 + triggers[0]}, Slug: "test"})
			triggers = triggers[1:]
		}
		rec := logfmt.Record{Channel: 1, RecvMonoNs: mono, RecvWallNs: 1e18 + mono, Payload: payload}
		if err := r.s.Write(output.Entry{Record: &rec}); err != nil {
			r.t.Fatal(err)
		}
		r.peak = max(r.peak, r.s.Status().PeakBytes)
	}
	if err := r.s.Close(); err != nil {
		r.t.Fatal(err)
	}
}

// write writes incompressible records of 32 KiB, one every 10 ms of
// receive time in [from, to), sealing a chunk every chunk records (0: at
// the end only).
func (r *snapRun) write(from, to int64, chunk int64) {
	payload := make([]byte, 32<<10)
	rng := rand.NewChaCha8([32]byte{byte(from)})
	step := int64(10 * time.Millisecond)
	for mono := from; mono < to; mono += step {
		rng.Read(payload)
		rec := logfmt.Record{Channel: 1, RecvMonoNs: mono, RecvWallNs: 1e18 + mono, Payload: payload}
		if err := r.s.Write(output.Entry{Record: &rec}); err != nil {
			r.t.Fatal(err)
		}
		if chunk > 0 && (mono/step)%chunk == chunk-1 {
			r.s.mw.Flush()
		}
	}
	if err := r.s.mw.Flush(); err != nil {
		r.t.Fatal(err)
	}
}

// monos reads a written snapshot's receive stamps and its metadata.
func monos(t *testing.T, path string) ([]int64, *logfmt.Snapshot) {
	t.Helper()
	rd, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out []int64
	it := rd.Records(logfmt.Filter{MetaOnly: true})
	for it.Next() {
		out = append(out, it.Record().RecvMonoNs)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	snap, err := logfmt.ParseSnapshot(rd.Header().Metadata)
	if err != nil || snap == nil {
		t.Fatalf("%s: snapshot metadata %v, %v", path, snap, err)
	}
	return out, snap
}

// checkWindow checks that recs are every step from `from` to `to`.
func checkWindow(t *testing.T, recs []int64, from, to, step int64) {
	t.Helper()
	if n := (to-from)/step + 1; int64(len(recs)) != n || recs[0] != from || recs[len(recs)-1] != to {
		t.Fatalf("records %d from %d to %d; want %d from %d to %d", len(recs), recs[0], recs[len(recs)-1], n, from, to)
	}
	for i := 1; i < len(recs); i++ {
		if recs[i]-recs[i-1] != step {
			t.Fatalf("gap at %d: %d → %d", i, recs[i-1], recs[i])
		}
	}
}

// A trigger writes exactly the window around it, with no gap; a trigger
// while the window is open extends it; one after it closed writes another.
func TestSnapshotWindows(t *testing.T) {
	r := newSnapRun(t, Config{Before: 3 * time.Second, After: time.Second, MaxBytes: 1 << 30})
	ms := int64(time.Millisecond)
	r.run(ms, 30*sec, 1000, 10*sec, 10*sec+500*ms, 20*sec)
	if len(r.results) != 2 {
		t.Fatalf("%d snapshots, want 2: %+v", len(r.results), r.results)
	}
	for i, want := range []struct {
		from, to int64
		n        int
	}{{7 * sec, 11*sec + 500*ms, 2}, {17 * sec, 21 * sec, 1}} {
		res := r.results[i]
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if !strings.HasSuffix(res.Path, "_test.vrlog") || !strings.Contains(filepath.Base(res.Path), "snap_") {
			t.Fatalf("named %s", res.Path)
		}
		recs, snap := monos(t, res.Path)
		checkWindow(t, recs, want.from, want.to, ms)
		if snap.TriggerCount != want.n || len(snap.Triggers) != want.n || snap.FromMonoNs != want.from || snap.ToMonoNs != want.to || snap.Short != "" {
			t.Fatalf("snapshot %d metadata %+v", i, snap)
		}
		if res.Records != uint64(len(recs)) {
			t.Fatalf("reported %d records, the log holds %d", res.Records, len(recs))
		}
	}
}

// A window is its records: when no record was received at the asked
// edges (here one every 7 ms), the window starts at its first record and
// ends at its last, also inside a chunk that straddles the edge.
func TestSnapshotWindowIsItsRecords(t *testing.T) {
	r := newSnapRun(t, Config{Before: 3 * time.Second, After: time.Second, MaxBytes: 1 << 30})
	ms := int64(time.Millisecond)
	r.run(7*ms, 30*sec, 1000, 10*sec)
	if len(r.results) != 1 || r.results[0].Err != nil {
		t.Fatalf("snapshots %+v, want 1", r.results)
	}
	recs, snap := monos(t, r.results[0].Path)
	checkWindow(t, recs, 7*sec+6*ms, 10*sec+996*ms, 7*ms)
	if snap.FromMonoNs != recs[0] || snap.ToMonoNs != recs[len(recs)-1] || snap.Short != "" {
		t.Fatalf("metadata window %d..%d (%q), the records %d..%d", snap.FromMonoNs, snap.ToMonoNs, snap.Short, recs[0], recs[len(recs)-1])
	}
}

// The memory bound holds whatever the rate, and the part after the
// trigger is guaranteed: it goes to the journal as it comes and needs no
// room, so a window that needs more than the bound keeps all of --after
// and what the bound held before the trigger, and says so; the first fill
// says what the bound holds, with the numbers.
func TestSnapshotMemoryBound(t *testing.T) {
	const bound = 32 << 20
	var notices []string
	r := newSnapRun(t, Config{Before: 20 * time.Second, After: 5 * time.Second, MaxBytes: bound,
		OnNotice: func(s string) { notices = append(notices, s) }})
	r.s.pinWait = 5 * time.Second // the journal keeps up, however loaded the machine: the test is of the bound
	ms := int64(time.Millisecond)
	r.run(10*ms, 40*sec, 32<<10, 25*sec) // 3.3 MB/s: the bound holds about 10 s, the window needs 82 MB
	if r.peak > bound {
		t.Fatalf("held %d bytes at most, the bound is %d", r.peak, bound)
	}
	if len(r.results) != 1 || r.results[0].Err != nil {
		t.Fatalf("snapshots %+v", r.results)
	}
	recs, snap := monos(t, r.results[0].Path)
	checkWindow(t, recs, recs[0], 30*sec, 10*ms)
	// The ring held about 10 s at the trigger, and the chunks still being
	// compressed (up to 4 of 1.3 s here: the test writes faster than real time).
	if recs[0] > 25*sec-8*sec || recs[0] < 25*sec-16*sec || len(recs)*32<<10 <= bound || !strings.Contains(snap.Short, "the memory bound (32 MiB) held only ") || !strings.Contains(snap.Short, "s before the trigger, 20s asked") ||
		snap.FromMonoNs != recs[0] || snap.ToMonoNs != 30*sec {
		t.Fatalf("window %d..%d (%+v): want the seconds the bound holds before the trigger at 25 s and all 5 s after", recs[0], recs[len(recs)-1], snap)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "snapshot buffer: 32 MiB holds about 9.") || !strings.Contains(notices[0], "a window of 20s before the trigger needs about 6") ||
		!strings.Contains(notices[0], "and all of the 5s after it, written to disk as it comes") {
		t.Fatalf("notices %q: want the shortfall at the first fill", notices)
	}
	t.Logf("held at most %d of %d bytes; snapshot %d records, %.2f s: %s; %s", r.peak, bound, len(recs), float64(recs[len(recs)-1]-recs[0])/1e9, snap.Short, notices[0])
}

// Triggers close together make one window and one file, also when the
// window needs more than the bound; a window is open for its whole asked
// --after whatever the memory.
func TestSnapshotCloseTriggersOneFile(t *testing.T) {
	const bound = 32 << 20
	r := newSnapRun(t, Config{Before: 30 * time.Second, After: 5 * time.Second, MaxBytes: bound})
	ms := int64(time.Millisecond)
	r.run(10*ms, 40*sec, 32<<10, 20*sec, 22*sec)
	if len(r.results) != 1 || r.results[0].Err != nil {
		t.Fatalf("%d snapshots, want 1: %+v", len(r.results), r.results)
	}
	recs, snap := monos(t, r.results[0].Path)
	checkWindow(t, recs, recs[0], 27*sec, 10*ms)
	if snap.TriggerCount != 2 || snap.ToMonoNs != 27*sec || snap.FromMonoNs != recs[0] {
		t.Fatalf("snapshot %+v: want both triggers, to 27 s", snap)
	}
}

// While a snapshot being written holds the oldest chunk, a full buffer
// drops new chunks after a short wait instead of growing, and a later
// snapshot covering them counts their records as recorder drops.
func TestSnapshotDropsWhileWriting(t *testing.T) {
	const bound = 16 << 20
	r := newSnapRun(t, Config{Before: 60 * time.Second, After: time.Second, MaxBytes: bound})
	s := r.s
	write := func(from, to int64) { r.write(from, to, 0) }
	write(sec, 10*sec) // fills the buffer
	s.mu.Lock()
	s.ring[0].pins++ // a snapshot being written holds the oldest chunk
	s.mu.Unlock()
	write(10*sec, 12*sec)
	st := s.Status()
	if st.Lost == 0 || st.PeakBytes > bound {
		t.Fatalf("held %d (bound %d), dropped %d records: want drops, within the bound", st.PeakBytes, bound, st.Lost)
	}
	s.mu.Lock()
	s.ring[0].pins--
	s.mu.Unlock()
	s.Trigger(Trigger{SnapshotTrigger: logfmt.SnapshotTrigger{Cause: "test", MonoNs: 12 * sec, WallNs: 1e18 + 12*sec}, Slug: "test"})
	write(12*sec, 14*sec)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(r.results) != 1 || r.results[0].Err != nil {
		t.Fatalf("snapshots %+v", r.results)
	}
	rd, err := logfmt.Open(r.results[0].Path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if d := rd.Stats()[0].Drops; d != st.Lost {
		t.Fatalf("the snapshot counts %d recorder drops, %d records were dropped", d, st.Lost)
	}
	t.Logf("%s", st)
}

// Drops at a window's start (records that found no room while an earlier
// snapshot was written) are said as what they are: the window starts late,
// from_ns is its first record, and the drops before it are not the log's.
func TestSnapshotLateStart(t *testing.T) {
	r := newSnapRun(t, Config{Before: 500 * time.Millisecond, After: 500 * time.Millisecond, MaxBytes: 4 << 20})
	s := r.s
	ms := int64(time.Millisecond)
	write := func(from, to int64) { r.write(from, to, 10) } // chunks of 100 ms
	pins := func(d int) {
		s.mu.Lock()
		for _, k := range s.ring {
			k.pins += d
		}
		s.mu.Unlock()
		s.freed.Broadcast()
	}
	write(sec, 5*sec) // the bound holds about 1.2 s
	pins(1)           // an earlier snapshot is being written
	write(5*sec, 5500*ms)
	pins(-1)
	write(5500*ms, 5800*ms)
	s.Trigger(Trigger{SnapshotTrigger: logfmt.SnapshotTrigger{Cause: "test", MonoNs: 5800 * ms, WallNs: 1e18 + 5800*ms}, Slug: "test"})
	write(5800*ms, 7000*ms)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(r.results) != 1 || r.results[0].Err != nil {
		t.Fatalf("snapshots %+v", r.results)
	}
	recs, snap := monos(t, r.results[0].Path)
	checkWindow(t, recs, 5500*ms, 6300*ms, 10*ms)
	rd, err := logfmt.Open(r.results[0].Path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if snap.FromMonoNs != 5500*ms || snap.Short != "the window starts 0.20 s late: 20 records dropped while an earlier snapshot was written" || rd.Stats()[0].Drops != 0 {
		t.Fatalf("snapshot %+v, %d drops: want it to start at 5.5 s, late by the drops", snap, rd.Stats()[0].Drops)
	}
}

// --after larger than the memory bound is held in full: the journal
// takes each chunk as it comes, and a chunk in the journal needs no room;
// the snapshot is made of the journal's chunks, byte for byte, and holds
// the window with no gap, its edges inside chunks (of 100 ms) the bound
// evicted before the window closed, and the recorder's drops in it.
func TestSnapshotAfterLargerThanBoundJournaled(t *testing.T) {
	const bound = 16 << 20
	var notices []string
	r := newSnapRun(t, Config{Before: 2 * time.Second, After: 10 * time.Second, MaxBytes: bound,
		OnNotice: func(s string) { notices = append(notices, s) }})
	r.s.pinWait = 5 * time.Second // the journal keeps up, however loaded the machine
	var journal string
	r.s.openJournal = func(path string) (journalFile, error) { journal = path; return openJournal(path) }
	ms := int64(time.Millisecond)
	s := r.s
	r.write(sec, 20*sec, 10)
	t0 := 20*sec + 50*ms // the window's edges inside chunks
	s.Trigger(Trigger{SnapshotTrigger: logfmt.SnapshotTrigger{Cause: "test", MonoNs: t0, WallNs: 1e18 + t0}, Slug: "test"})
	r.write(20*sec, 25*sec, 10)
	s.mu.Lock()
	s.drops = append(s.drops, dropMark{mono: 25 * sec, name: "a", n: 5, why: dropUpstream}) // the transport lost some, within the window (as addDrops books them)
	s.mu.Unlock()
	r.write(25*sec, 40*sec, 10)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(r.results) != 1 || r.results[0].Err != nil {
		t.Fatalf("snapshots %+v", r.results)
	}
	if st := s.Status(); st.PeakBytes > bound || st.Lost != 0 {
		t.Fatalf("buffer peak %d (bound %d), %d records dropped: want within the bound, none dropped", st.PeakBytes, bound, st.Lost)
	}
	recs, snap := monos(t, r.results[0].Path)
	checkWindow(t, recs, t0-2*sec, t0+10*sec, 10*ms)
	if snap.FromMonoNs != t0-2*sec || snap.ToMonoNs != t0+10*sec || snap.Short != "5 records lost in the window before the buffer (the transport's or the recorder's queues), counted as recorder drops" {
		t.Fatalf("snapshot %+v: want 2 s before and all 10 s after the trigger, short of the 5 records the transport lost only", snap)
	}
	rd, err := logfmt.Open(r.results[0].Path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if d := rd.Stats()[0].Drops; d != 5 {
		t.Fatalf("the snapshot counts %d recorder drops, 5 were booked in its window", d)
	}
	if _, err := os.Stat(journal); !os.IsNotExist(err) || journal == "" {
		t.Fatalf("journal %q: %v, want it removed", journal, err)
	}
	if len(notices) != 0 {
		t.Fatalf("notices %q: the bound holds the 2 s before", notices)
	}
}

// The journal keeps the recorder's drops (AddDrops) as the window goes:
// a kill -9 leaves them in the log vrlog recover restores.
func TestSnapshotJournalKeepsDrops(t *testing.T) {
	r := newSnapRun(t, Config{Before: time.Second, After: 10 * time.Second, MaxBytes: 64 << 20})
	s := r.s
	ms := int64(time.Millisecond)
	var journal string
	r.s.openJournal = func(path string) (journalFile, error) { journal = path; return openJournal(path) }
	r.write(sec, 5*sec, 10)
	s.Trigger(Trigger{SnapshotTrigger: logfmt.SnapshotTrigger{Cause: "test", MonoNs: 5 * sec, WallNs: 1e18 + 5*sec}, Slug: "test"})
	s.mu.Lock()
	s.drops = append(s.drops, dropMark{mono: 5500 * ms, name: "a", n: 3, why: dropUpstream})
	s.mu.Unlock()
	r.write(5*sec, 7*sec, 10)
	waitUntil(t, func() bool { // the journal took the chunks so far
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.open != nil && s.open.disk == len(s.open.chunks) && s.open.busy == nil
	})
	rd, err := logfmt.Open(journal, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := rd.Stats()[0].Drops
	rd.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d != 3 {
		t.Fatalf("the journal counts %d recorder drops, 3 were booked in its window", d)
	}
}

func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// failingJournal is a journal whose writes fail once it holds limit
// bytes, as on a full disk.
type failingJournal struct {
	f     *os.File
	limit int
}

func (j *failingJournal) Write(p []byte) (int, error) {
	if len(p) > j.limit {
		n, _ := j.f.Write(p[:j.limit])
		j.limit = 0
		return n, syscall.ENOSPC
	}
	j.limit -= len(p)
	return j.f.Write(p)
}
func (j *failingJournal) Sync() error  { return j.f.Sync() }
func (j *failingJournal) Close() error { return j.f.Close() }

// A journal that fails midway (a full disk) is given up and said: the
// snapshot takes what the journal holds and the rest from memory, with no
// gap and no record twice.
func TestSnapshotJournalFailsMidway(t *testing.T) {
	var notices []string
	r := newSnapRun(t, Config{Before: 2 * time.Second, After: 3 * time.Second, MaxBytes: 64 << 20,
		OnNotice: func(s string) { notices = append(notices, s) }})
	r.s.openJournal = func(path string) (journalFile, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		return &failingJournal{f: f, limit: 5 << 20}, err
	}
	ms := int64(time.Millisecond)
	r.run(10*ms, 20*sec, 32<<10, 10*sec)
	if len(r.results) != 1 || r.results[0].Err != nil {
		t.Fatalf("snapshots %+v", r.results)
	}
	recs, snap := monos(t, r.results[0].Path)
	checkWindow(t, recs, 8*sec, 13*sec, 10*ms)
	if snap.Short != "" || len(notices) != 1 || !strings.Contains(notices[0], "no space left on device") || !strings.Contains(notices[0], "held in memory") {
		t.Fatalf("snapshot %+v, notices %q: want the whole window, the journal's failure said", snap, notices)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(r.results[0].Path), "*.partial")); len(m) != 0 {
		t.Fatalf("journals left: %v", m)
	}
}

// When the journal cannot be written (its directory refuses it) the
// window is held in memory, and --after alone needing more than the
// memory bound is cut short: the snapshot says what it holds from its
// records (its window is its first and last records, never a negative
// before), that the memory bound cut the after part, with the numbers,
// and how many records the recorder dropped in the window and why.
func TestSnapshotAfterLargerThanBound(t *testing.T) {
	const bound = 16 << 20
	var notices []string
	r := newSnapRun(t, Config{Before: 2 * time.Second, After: 10 * time.Second, MaxBytes: bound,
		OnNotice: func(s string) { notices = append(notices, s) }})
	r.s.openJournal = func(string) (journalFile, error) { return nil, syscall.EACCES }
	ms := int64(time.Millisecond)
	r.run(10*ms, 40*sec, 32<<10, 20*sec) // 3.3 MB/s: the bound holds about 5 s
	if len(r.results) != 1 || r.results[0].Err != nil {
		t.Fatalf("snapshots %+v", r.results)
	}
	recs, snap := monos(t, r.results[0].Path)
	first, last := recs[0], recs[len(recs)-1]
	if last >= 30*sec-sec || last <= 20*sec {
		t.Fatalf("last record %d: want the after part cut by the bound", last)
	}
	if snap.FromMonoNs != first || snap.ToMonoNs != last {
		t.Fatalf("metadata window %d..%d, the records %d..%d", snap.FromMonoNs, snap.ToMonoNs, first, last)
	}
	want := fmt.Sprintf("the memory bound (16 MiB) held %.3f s after the trigger of the 10s asked: 10s after the trigger at the current 3 MB/s needs a bound of about", float64(last-20*sec)/1e9)
	if !strings.Contains(snap.Short, want) || !strings.Contains(snap.Short, "records dropped by the recorder in the window (the memory bound") ||
		strings.Contains(snap.Short, "-0.") || strings.Contains(snap.Short, "kept the 10s after") {
		t.Fatalf("short %q: want %q and the drops", snap.Short, want)
	}
	if len(notices) == 0 || !strings.Contains(notices[len(notices)-1], "permission denied: a kill -9 before the snapshot is written would lose it, and the rest of the window is held in memory") {
		t.Fatalf("notices %q: want the journal's failure said", notices)
	}
	// The window's drops are the memory bound's; records flooding in
	// (20 s of them in milliseconds) while the window is written out
	// afterwards may be dropped as behind too, outside it.
	if st := r.s.Status(); !strings.Contains(st.String(), "by the memory bound") || strings.Contains(snap.Short, "disk") {
		t.Fatalf("status %q, short %q: want the window's drops blamed on the memory bound", st, snap.Short)
	}
	t.Logf("%d records %d..%d: %s; %s", len(recs), first, last, snap.Short, notices)
}

// slowJournal is a journal on a disk slower than the streams: each large
// write takes delay.
type slowJournal struct {
	*os.File
	delay time.Duration
}

func (j slowJournal) Write(p []byte) (int, error) {
	if len(p) > 64<<10 {
		time.Sleep(j.delay)
	}
	return j.File.Write(p)
}

// A journal slower than the streams cannot make memory grow: the chunks
// it has not taken wait a little, then give way (the oldest part before
// the trigger first, then records of the after part, dropped and counted),
// and the snapshot says it was the disk, not the memory bound.
func TestSnapshotJournalBehind(t *testing.T) {
	const bound = 16 << 20
	r := newSnapRun(t, Config{Before: 2 * time.Second, After: 10 * time.Second, MaxBytes: bound})
	r.s.openJournal = func(path string) (journalFile, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil {
			return nil, err
		}
		return slowJournal{File: f, delay: 300 * time.Millisecond}, nil // a 4 MiB chunk at 14 MB/s
	}
	ms := int64(time.Millisecond)
	r.run(10*ms, 35*sec, 32<<10, 20*sec)
	if len(r.results) != 1 || r.results[0].Err != nil {
		t.Fatalf("snapshots %+v", r.results)
	}
	_, snap := monos(t, r.results[0].Path)
	st := r.s.Status()
	if r.peak > bound || st.LostBehind == 0 || st.LostBound != 0 || !strings.Contains(snap.Short, "the disk") || strings.Contains(snap.Short, "needs about") {
		t.Fatalf("peak %d (bound %d), status %s, short %q: want drops said as the disk's, within the bound", r.peak, bound, st, snap.Short)
	}
	t.Logf("%s; short: %s", st, snap.Short)
}

// What the memory bound holds is said at the first fill, and again once
// the ring turned over holding a tenth less: the rate doubled.
func TestSnapshotShortfallSaidAgain(t *testing.T) {
	var notices []string
	r := newSnapRun(t, Config{Before: 10 * time.Second, After: time.Second, MaxBytes: 16 << 20,
		OnNotice: func(m string) { notices = append(notices, m) }})
	ms := int64(time.Millisecond)
	rng := rand.NewChaCha8([32]byte{3})
	mono := sec
	feed := func(until int64, size int) {
		payload := make([]byte, size)
		for ; mono < until; mono += ms {
			rng.Read(payload) // incompressible
			rec := logfmt.Record{Channel: 1, RecvMonoNs: mono, RecvWallNs: 1e18 + mono, Payload: payload}
			if err := r.s.Write(output.Entry{Record: &rec}); err != nil {
				t.Fatal(err)
			}
			if mono%(100*ms) == 0 {
				r.s.mw.Flush()
			}
		}
	}
	feed(30*sec, 2000) // 2 MB/s: 16 MiB hold about 8.4 s
	if len(notices) != 1 || !strings.Contains(notices[0], "holds about 8.") {
		t.Fatalf("notices at 2 MB/s: %q", notices)
	}
	feed(60*sec, 4000) // 4 MB/s: about 4.2 s
	if err := r.s.Close(); err != nil {
		t.Fatal(err)
	}
	var held, said float64
	last := notices[len(notices)-1]
	if _, err := fmt.Sscanf(last[strings.Index(last, "now holds"):], "now holds %g s of the streams (%g s when said before", &held, &said); err != nil || held > 5 || held < 2 || said < 5 {
		t.Fatalf("notices: %q (%v)", notices, err)
	}
	t.Log(notices)
}

// A snapshot's wall-clock window is its edge records' own receive stamps
// (the recorder's wall clock moves against its monotonic one by
// microseconds between records), not its monotonic ends shifted by the
// trigger's offset, which missed an edge record by up to 1.5 µs.
func TestSnapshotWallEdgesAreRecords(t *testing.T) {
	r := newSnapRun(t, Config{Before: 3 * time.Second, After: time.Second, MaxBytes: 1 << 30})
	ms := int64(time.Millisecond)
	wall := func(mono int64) int64 { return 1e18 + mono + (mono/ms%7)*700 } // 0-4.2 µs of wander
	payload := make([]byte, 1000)
	for mono := sec; mono <= 20*sec; mono += ms {
		if mono == 10*sec {
			r.s.Trigger(Trigger{SnapshotTrigger: logfmt.SnapshotTrigger{Cause: "test", MonoNs: mono, WallNs: wall(mono)}, Slug: "test"})
		}
		rec := logfmt.Record{Channel: 1, RecvMonoNs: mono, RecvWallNs: wall(mono), Payload: payload}
		if err := r.s.Write(output.Entry{Record: &rec}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.s.Close(); err != nil {
		t.Fatal(err)
	}
	if len(r.results) != 1 || r.results[0].Err != nil {
		t.Fatalf("snapshots %+v", r.results)
	}
	rd, err := logfmt.Open(r.results[0].Path, logfmt.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	snap, err := logfmt.ParseSnapshot(rd.Header().Metadata)
	if err != nil {
		t.Fatal(err)
	}
	var first, last int64
	it := rd.Records(logfmt.Filter{MetaOnly: true})
	for n := 0; it.Next(); n++ {
		if n == 0 {
			first = it.Record().RecvWallNs
		}
		last = it.Record().RecvWallNs
	}
	if snap.FromWallNs != first || snap.ToWallNs != last || first != wall(7*sec) || last != wall(11*sec) {
		t.Fatalf("window on the wall clock %d..%d, its records %d..%d (want %d..%d)", snap.FromWallNs, snap.ToWallNs, first, last, wall(7*sec), wall(11*sec))
	}
}
