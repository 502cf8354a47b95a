package recorder

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
	"github.com/vrlog/vrlog/transport/clock"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// SnapshotConfig makes a recording a snapshot recorder (record
// --snapshot): it keeps the last Before of every channel in memory, in
// compressed chunks (logfmt.NewMemoryWriter), within MaxBytes, and writes
// nothing until a trigger; then one log holding Before before the trigger
// and After after it. A trigger while that window is open extends it.
type SnapshotConfig struct {
	Before, After time.Duration
	// MaxBytes bounds the chunks held in memory, those being written out
	// included. The time before a trigger is what a snapshot is for: when
	// the window needs more than MaxBytes, it ends early (the data before
	// the trigger is kept), and the log says so (logfmt.Snapshot.Short).
	MaxBytes int64
	// Query, if set, is the zenoh key of a queryable that triggers a
	// snapshot and replies with the file written (vrlog/record/NAME/snapshot);
	// a liveliness token on the same key says the recorder is there.
	Query string
	// Faults are analyze's checks watched live: a sample that makes one
	// fail triggers a snapshot.
	Faults []analyzer.Trigger
	// Manual triggers come from outside (record's SIGUSR1), stamped by
	// the sender (TriggerNow).
	Manual <-chan logfmt.SnapshotTrigger
	// OnSnapshot, if set, is called once per snapshot written or failed,
	// from the goroutine that writes them.
	OnSnapshot func(SnapshotResult)
}

// SnapshotResult is one snapshot written, or not (Err).
type SnapshotResult struct {
	Path     string
	Snapshot logfmt.Snapshot
	Records  uint64
	Bytes    int64
	Err      error
}

// SnapshotStatus is the snapshot buffer's state.
type SnapshotStatus struct {
	Bytes, MaxBytes int64         // held now (the open chunk aside), and the bound
	PeakBytes       int64         // the most held at once
	Span            time.Duration // receive time the held chunks cover
	Chunks          int
	Open            bool   // a window is open: a snapshot is coming
	Written         int    // snapshots written
	Lost            uint64 // records dropped: no room while a snapshot was written (a disk slower than the streams)
}

// String is the buffer for a status line.
func (s SnapshotStatus) String() string {
	line := fmt.Sprintf("snapshot buffer: %.1f s in %d chunks, %s of %s (peak %s); %d snapshot(s) written",
		s.Span.Seconds(), s.Chunks, mib(s.Bytes), mib(s.MaxBytes), mib(s.PeakBytes), s.Written)
	if s.Open {
		line += "; a snapshot is being taken"
	}
	if s.Lost > 0 {
		line += fmt.Sprintf("; %d records dropped while snapshots were written (the disk is slower than the streams)", s.Lost)
	}
	return line
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// TriggerNow is a trigger with cause, stamped now on the clocks the
// transports stamp samples with.
func TriggerNow(cause string) logfmt.SnapshotTrigger {
	return logfmt.SnapshotTrigger{Cause: cause, WallNs: clock.WallNow(), MonoNs: clock.MonoNow()}
}

// trigger is a snapshot trigger on its way to the snapshotter.
type trigger struct {
	logfmt.SnapshotTrigger
	slug  string         // names the file: "sigusr1", "query", "max-restarts_vr-r1-state"
	reply *zenoh.Pending // a query's: answered with the file written
}

// settle is how long after a window's end the snapshotter waits for the
// records received before it, still on their way through the recorder.
const settle = 300 * time.Millisecond

// snapshotter is the recording's output in snapshot mode: a memory writer
// whose chunks it keeps within the budget, windows opened and extended by
// triggers, and a goroutine that writes each closed window out as a log
// (through outfile: a temporary name, read back, renamed). The
// recorder's writer goroutine calls it; keep runs on the memory writer's
// stage goroutine, the writes on their own.
type snapshotter struct {
	cfg  Config
	sc   SnapshotConfig
	mw   *logfmt.Writer
	defs []*logfmt.Channel // in id order
	ids  map[string]uint16
	done chan struct{}
	// recording names this recorder run in every snapshot it writes
	recording string

	mu        sync.Mutex // guards what follows (keep, the writes, status)
	freed     *sync.Cond // a chunk being written out was released
	queued    *sync.Cond // a window was closed, or the recording ended
	open      *window    // the window triggers extend; nil when none
	queue     []*window  // closed windows, to be written
	ending    bool       // no more windows
	ring      []*kept    // oldest first
	held      int64
	peak      int64
	newest    int64  // latest receive stamp kept
	first     int64  // first receive stamp kept (0: none yet)
	squeezed  int64  // latest receive stamp the memory bound evicted
	lost      uint64 // records dropped for want of room (dropped)
	drops     []dropMark
	files     []string
	written   int64
	snapshots int
	err       error // the first snapshot that could not be written
}

// kept is a chunk in the ring; pins count the snapshots writing it out.
type kept struct {
	c        *logfmt.Chunk
	min, max int64 // receive-time range (mono)
	pins     int
}

// window is a snapshot being taken: the receive-time window it holds.
type window struct {
	from, to int64 // mono, both included
	triggers []trigger
	count    int
	defs     []*logfmt.Channel
	chunks   []*kept
	drops    map[string]uint64
	short    string
}

// dropMark is recorder drops booked at a time, so a snapshot carries the
// drops of its window.
type dropMark struct {
	mono int64
	name string
	n    uint64
}

func newSnapshotter(cfg Config) (*snapshotter, error) {
	s := &snapshotter{cfg: cfg, sc: *cfg.Snapshot, ids: map[string]uint16{}, done: make(chan struct{}), recording: recordingID()}
	s.freed, s.queued = sync.NewCond(&s.mu), sync.NewCond(&s.mu)
	mw, err := logfmt.NewMemoryWriter(logfmt.WriterOptions{FlushInterval: cfg.FlushInterval}, s.keep)
	if err != nil {
		return nil, err
	}
	s.mw = mw
	go func() { defer close(s.done); s.writeAll() }()
	return s, nil
}

// keep takes a sealed chunk into the ring, evicting the oldest chunks the
// budget and the time span no longer need. An open window that would lose
// its start to the budget ends instead, just before this chunk (a chunk
// that still holds records from before the trigger takes the window's
// oldest chunk instead). A chunk a snapshot is writing out is never
// evicted: keep waits up to pinWait for the writing to release it, then
// drops the new chunk, its records counted as recorder drops in the
// snapshots that cover them, so that neither memory nor the recording's
// backlog grows when the disk is slower than the streams.
func (s *snapshotter) keep(c *logfmt.Chunk) {
	info := c.Info()
	k := &kept{c: c, min: info.MinMonoNs, max: info.MaxMonoNs}
	s.mu.Lock()
	defer s.mu.Unlock()
	var deadline time.Time
	for len(s.ring) > 0 && s.held+int64(c.Size()) > s.sc.MaxBytes {
		switch front := s.ring[0]; {
		case front.pins > 0 && deadline.IsZero():
			deadline = time.Now().Add(pinWait)
			defer time.AfterFunc(pinWait, func() { s.mu.Lock(); s.freed.Broadcast(); s.mu.Unlock() }).Stop()
			s.freed.Wait()
		case front.pins > 0 && time.Now().Before(deadline):
			s.freed.Wait()
		case front.pins > 0:
			s.dropped(info)
			s.mw.Recycle(c)
			return
		case s.open != nil && front.max >= s.open.from && k.min > s.open.triggers[0].MonoNs:
			s.closeLocked(k.min-1, fmt.Sprintf("the memory bound (%s) ended the window %.3f s after the trigger, %s asked",
				mib(s.sc.MaxBytes), float64(k.min-1-s.open.triggers[0].MonoNs)/1e9, s.sc.After))
		default:
			s.squeezed = max(s.squeezed, front.max)
			s.evict()
		}
	}
	s.ring = append(s.ring, k)
	s.held += int64(c.Size())
	s.peak = max(s.peak, s.held)
	s.newest = max(s.newest, k.max)
	if s.first == 0 || k.min < s.first {
		s.first = k.min
	}
	horizon := s.newest - s.sc.Before.Nanoseconds() - settle.Nanoseconds()
	for len(s.ring) > 0 && s.ring[0].pins == 0 && s.ring[0].max < horizon && (s.open == nil || s.ring[0].max < s.open.from) {
		s.evict()
	}
}

// pinWait is how long keep waits for a snapshot being written to release
// the oldest chunk before it drops the newest: long enough for a disk
// that keeps up, short enough that the recording's backlog stays small.
const pinWait = 100 * time.Millisecond

// dropped books the records of a chunk that found no room (mu held).
func (s *snapshotter) dropped(info logfmt.ChunkInfo) {
	for _, cc := range info.Channels {
		if int(cc.Channel) <= len(s.defs) && cc.Channel > 0 {
			s.drops = append(s.drops, dropMark{mono: info.MaxMonoNs, name: s.defs[cc.Channel-1].Name, n: uint64(cc.Records)})
			s.lost += uint64(cc.Records)
		}
	}
}

// evict drops the oldest chunk (mu held).
func (s *snapshotter) evict() {
	k := s.ring[0]
	s.ring[0] = nil
	s.ring = s.ring[1:]
	s.held -= int64(k.c.Size())
	s.mw.Recycle(k.c) // unpinned: in no file writer's queue
	for len(s.drops) > 0 && s.drops[0].mono <= k.max {
		s.drops = s.drops[1:]
	}
}

// trigger opens a window, or extends the open one.
func (s *snapshotter) trigger(t trigger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.open
	if w == nil {
		w = &window{from: t.MonoNs - s.sc.Before.Nanoseconds(), to: t.MonoNs + s.sc.After.Nanoseconds()}
		s.open = w
	}
	w.to = max(w.to, t.MonoNs+s.sc.After.Nanoseconds())
	w.count++
	if len(w.triggers) < logfmt.MaxSnapshotTriggers || t.reply != nil {
		w.triggers = append(w.triggers, t) // a query's trigger is kept to be answered
	}
}

// due closes the open window once now (a receive stamp, or the clock) is
// past its end by the settling time.
func (s *snapshotter) due(now int64) error {
	s.mu.Lock()
	w := s.open
	s.mu.Unlock()
	if w == nil || now < w.to+settle.Nanoseconds() {
		return nil
	}
	return s.closeWindow(false)
}

// closeWindow ends the open window once every record received so far is
// kept: at its end, or where the recording ended.
func (s *snapshotter) closeWindow(ended bool) error {
	if err := s.mw.Flush(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open != nil { // the memory bound may have ended it meanwhile
		to, end := s.open.to, ""
		if ended && s.newest < to {
			to = s.newest
			end = fmt.Sprintf("the recording ended %.3f s after the trigger, %s asked", float64(to-s.open.triggers[0].MonoNs)/1e9, s.sc.After)
		}
		s.closeLocked(to, end)
	}
	return nil
}

// closeLocked ends the open window at to and queues it for writing with
// the chunks it needs, pinned (mu held).
func (s *snapshotter) closeLocked(to int64, end string) {
	w := s.open
	s.open = nil
	w.to = min(w.to, to)
	w.defs = append([]*logfmt.Channel(nil), s.defs...)
	for _, k := range s.ring {
		if k.max >= w.from && k.min <= w.to {
			k.pins++
			w.chunks = append(w.chunks, k)
		}
	}
	w.drops = map[string]uint64{}
	for _, d := range s.drops {
		if d.mono >= w.from && d.mono <= w.to {
			w.drops[d.name] += d.n
		}
	}
	var why []string
	t0 := w.triggers[0].MonoNs
	if len(w.chunks) > 0 && w.chunks[0].min > w.from {
		oldest := w.chunks[0].min
		switch {
		case s.first == oldest:
			why = append(why, fmt.Sprintf("the recording started %.3f s before the trigger, %s asked", float64(t0-oldest)/1e9, s.sc.Before))
			w.from = oldest
		case s.squeezed >= w.from:
			why = append(why, fmt.Sprintf("the memory bound (%s) held only %.3f s before the trigger, %s asked", mib(s.sc.MaxBytes), float64(t0-oldest)/1e9, s.sc.Before))
			w.from = oldest
		}
	}
	if len(w.chunks) == 0 {
		why = append(why, "nothing was received in the window")
	}
	if end != "" {
		why = append(why, end)
	}
	w.short = strings.Join(why, "; ")
	s.queue = append(s.queue, w)
	s.queued.Signal()
}

// writeAll writes the closed windows, one after the other, until the
// recording ends.
func (s *snapshotter) writeAll() {
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.ending {
			s.queued.Wait()
		}
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return
		}
		w := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		res := s.writeWindow(w)
		for _, t := range w.triggers {
			if t.reply == nil {
				continue
			}
			if res.Err != nil {
				t.reply.Reply(zenoh.Reply{Key: s.sc.Query, Err: true, Payload: []byte(res.Err.Error()), Encoding: "text/plain"})
			} else {
				path, _ := filepath.Abs(res.Path) // the querier may be elsewhere
				t.reply.Reply(zenoh.Reply{Key: s.sc.Query, Payload: []byte(path), Encoding: "text/plain"})
			}
		}
		s.mu.Lock()
		if res.Err != nil && s.err == nil {
			s.err = res.Err
		}
		if res.Err == nil {
			s.files = append(s.files, res.Path)
			s.written += res.Bytes
			s.snapshots++
		}
		s.mu.Unlock()
		if s.sc.OnSnapshot != nil {
			s.sc.OnSnapshot(res)
		}
	}
}

// writeWindow writes one window as a complete, verified log, releasing
// each chunk once it is in the file.
func (s *snapshotter) writeWindow(w *window) (res SnapshotResult) {
	defer func() {
		for _, k := range w.chunks {
			s.unpin(k)
		}
	}()
	from := w.from
	t0 := w.triggers[0]
	off := t0.WallNs - t0.MonoNs // the recorder's wall minus mono clock, at the trigger
	res.Snapshot = logfmt.Snapshot{Before: s.sc.Before, After: s.sc.After, TriggerCount: w.count, Short: w.short,
		FromMonoNs: from, ToMonoNs: w.to, FromWallNs: from + off, ToWallNs: w.to + off, Recording: s.recording}
	for _, t := range w.triggers {
		res.Snapshot.Triggers = append(res.Snapshot.Triggers, t.SnapshotTrigger)
	}
	res.Snapshot.Triggers = res.Snapshot.Triggers[:min(len(res.Snapshot.Triggers), logfmt.MaxSnapshotTriggers)]
	f, err := s.create(t0)
	if err != nil {
		res.Err = err
		return res
	}
	defer f.Abort()
	res.Path = f.Path()
	fail := func(err error) SnapshotResult {
		res.Err = fmt.Errorf("snapshot %s: %w", res.Path, err)
		return res
	}
	md := logMetadata(s.cfg)
	md["tool"] = "vrlog record --snapshot"
	res.Snapshot.AddTo(md)
	lw, err := logfmt.NewWriter(f, logfmt.WriterOptions{Metadata: md, FlushInterval: -1, Sync: logfmt.SyncOnClose})
	if err != nil {
		return fail(err)
	}
	defer lw.Close()
	ids := map[string]uint16{}
	for _, d := range w.defs { // the memory writer's ids, in its order
		if ids[d.Name], err = lw.AddChannel(*d); err != nil {
			return fail(err)
		}
	}
	for i, k := range w.chunks {
		n, err := lw.WriteChunk(k.c, from, w.to)
		if err == nil {
			err = lw.Flush() // in the file: the chunk may go
		}
		if err != nil {
			return fail(err)
		}
		res.Records += n
		s.unpin(k)
		w.chunks[i] = nil
	}
	w.chunks = nil
	for name, n := range w.drops {
		lw.AddDrops(ids[name], n)
	}
	if err := lw.Close(); err != nil {
		return fail(err)
	}
	if err := f.CommitChecked(logfmt.ReadBackCheck(res.Records)); err != nil {
		res.Err = err // outfile names the file
		return res
	}
	if st, err := os.Stat(res.Path); err == nil {
		res.Bytes = st.Size()
	}
	return res
}

func (s *snapshotter) unpin(k *kept) {
	if k == nil {
		return
	}
	s.mu.Lock()
	k.pins--
	s.mu.Unlock()
	s.freed.Broadcast()
}

// create starts the file of a snapshot: BASE_TIME_CAUSE.vrlog, BASE the
// output without .vrlog, TIME the trigger's (UTC, milliseconds), CAUSE
// what triggered it; -N is added when that name is taken.
func (s *snapshotter) create(t trigger) (*outfile.File, error) {
	base := strings.TrimSuffix(s.cfg.Output, ".vrlog")
	stamp := time.Unix(0, t.WallNs).UTC().Format("20060102T150405.000Z")
	for n := 1; ; n++ {
		name := fmt.Sprintf("%s_%s_%s.vrlog", base, stamp, t.slug)
		if n > 1 {
			name = fmt.Sprintf("%s_%s_%s-%d.vrlog", base, stamp, t.slug, n)
		}
		f, err := outfile.Create(name, outfile.Options{Force: s.cfg.Force})
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
}

// slug makes text a file-name part: vr/r1/state → vr-r1-state.
func slug(text string) string {
	return strings.Trim(regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(text, "-"), "-")
}

// ---- the recorder's output ----

func (s *snapshotter) ensure(int64) error { return nil }

func (s *snapshotter) addChannel(d *logfmt.Channel) error {
	id, err := s.mw.AddChannel(*d)
	if err != nil {
		return fmt.Errorf("snapshot buffer: channel %s: %w", d.Name, err)
	}
	s.mu.Lock()
	s.defs = append(s.defs, d)
	s.mu.Unlock()
	s.ids[d.Name] = id
	return nil
}

func (s *snapshotter) id(name string) uint16 { return s.ids[name] }

func (s *snapshotter) addDrops(name string, n uint64) {
	s.mw.AddDrops(s.ids[name], n)
	s.mu.Lock()
	s.drops = append(s.drops, dropMark{mono: clock.MonoNow(), name: name, n: n})
	s.mu.Unlock()
}

func (s *snapshotter) write(r *logfmt.Record, release func()) error {
	if err := s.mw.WriteOwned(r, release); err != nil {
		return fmt.Errorf("snapshot buffer: %w", err)
	}
	return s.due(r.RecvMonoNs)
}

func (s *snapshotter) seal(bool) error { return s.mw.Seal() }

func (s *snapshotter) busy() bool { return false } // one lane: nothing to do meanwhile

func (s *snapshotter) tick() error { return s.due(clock.MonoNow()) }

// close writes the open window, if any, as far as the recording got, and
// waits for every snapshot to be written; the first that could not be is
// the error.
func (s *snapshotter) close() error {
	var err error
	s.mu.Lock()
	open := s.open != nil
	s.mu.Unlock()
	if open {
		err = s.closeWindow(true)
	}
	s.mu.Lock()
	s.ending = true
	s.queued.Signal()
	s.mu.Unlock()
	<-s.done
	if cerr := s.mw.Close(); err == nil && cerr != nil {
		err = cerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		err = s.err
	}
	return err
}

func (s *snapshotter) bytes() (written int64, raw uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written, s.mw.Stats().RawBytes
}

func (s *snapshotter) paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.files...)
}

func (s *snapshotter) abandon() { s.close() }

// status is the buffer's state.
func (s *snapshotter) status() SnapshotStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := SnapshotStatus{Bytes: s.held, MaxBytes: s.sc.MaxBytes, PeakBytes: s.peak, Chunks: len(s.ring), Open: s.open != nil, Written: s.snapshots, Lost: s.lost}
	if len(s.ring) > 0 {
		st.Span = time.Duration(s.newest - s.ring[0].min)
	}
	return st
}

// query is the snapshot queryable's handler: the query triggers a
// snapshot (its payload, if any, adds to the cause) and is answered with
// the file once written.
func (r *rec) query(q zenoh.Query, p *zenoh.Pending) {
	cause := "zenoh query on " + q.Key
	if note := strings.TrimSpace(string(q.Payload)); note != "" {
		cause += ": " + note
	}
	t := trigger{SnapshotTrigger: logfmt.SnapshotTrigger{Cause: cause, WallNs: q.RecvWallNs, MonoNs: q.RecvMonoNs}, slug: "query", reply: p}
	select {
	case r.trig <- t:
	default:
		p.Reply(zenoh.Reply{Key: r.cfg.Snapshot.Query, Err: true, Payload: []byte("too many snapshot queries at once; try again"), Encoding: "text/plain"})
	}
}

// refuseTriggers answers the queries that came too late: the recording
// is over.
func (r *rec) refuseTriggers() {
	for r.trig != nil {
		select {
		case t := <-r.trig:
			t.reply.Reply(zenoh.Reply{Key: r.cfg.Snapshot.Query, Err: true, Payload: []byte("the recording is over: no snapshot"), Encoding: "text/plain"})
		default:
			return
		}
	}
}

// recordingID is a random name for one recorder run.
func recordingID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
