// Package snapshot is a recorder's output in snapshot mode (record
// --snapshot): it keeps the last Config.Before of every channel in
// memory, in compressed chunks (logfmt.NewMemoryWriter), within
// Config.MaxBytes, and writes nothing until a trigger; then one log
// holding Before before the trigger and After after it. A trigger while
// that window is open extends it. It implements recorder/output.Output;
// the recorder's writer stage is its only caller, but for Status,
// Progress and Trigger, which any goroutine may call.
package snapshot

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/internal/ui"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
	"github.com/vrlog/vrlog/recorder/output"
	"github.com/vrlog/vrlog/transport/clock"
)

// Config is what a snapshot recorder keeps and writes, and whom it tells.
type Config struct {
	Before, After time.Duration
	// MaxBytes bounds the chunks held in memory, those being written out
	// included: the ring before a trigger, and what a window's journal
	// (on disk) has not taken yet. The part after a trigger goes to the
	// journal as it comes, so it is held in full whatever the rate while
	// the disk keeps up; when the journal falls behind by MaxBytes, or
	// cannot be written (then the window is held in memory), the oldest
	// part before the trigger is left out first, and then the after part
	// is cut short too (its records dropped and counted). Either way the
	// log says so (logfmt.Snapshot.Short) and its window is its records;
	// the first fill of the buffer says what it holds (OnNotice).
	MaxBytes int64
	// OnSnapshot, if set, is called once per snapshot written or failed,
	// from the goroutine that writes them.
	OnSnapshot func(Result)
	// OnNotice, if set, is told what a person should know while the
	// recording goes on: the first fill of the buffer when it holds less
	// than the window asked (with the numbers), a journal that could not
	// be written. It may be called from any goroutine, under locks: it
	// must not block.
	OnNotice func(string)
	// OnOpen, if set, is told of each window as its writing starts: the
	// trigger that opened it and its journal, the log a kill -9 leaves
	// (for vrlog recover) until the snapshot is in place.
	OnOpen func(t logfmt.SnapshotTrigger, journal string)
}

// Options is Config and what the recorder adds: where the snapshots go
// and what their headers say.
type Options struct {
	Config
	// Base names the snapshots: BASE_TIME_CAUSE.vrlog (BASE without
	// .vrlog), TIME the trigger's (UTC, milliseconds), CAUSE its slug.
	Base          string
	Force         bool              // replace an existing snapshot of the same name
	FlushInterval time.Duration     // how long a record may stay in the open chunk
	Metadata      map[string]string // every snapshot's header metadata (tool, note, host, recording)
}

// Result is one snapshot written, or not (Err).
type Result struct {
	Path string
	// Before and After are what the records hold: the first trigger less
	// the first record, the last record less the last trigger (never
	// negative).
	Before, After time.Duration
	Snapshot      logfmt.Snapshot
	Records       uint64
	Bytes         int64
	// Late is how far the window's end moved past the one asked, waiting
	// for LateStream, whose records arrived up to LateBy after capture
	// (0 when no stream was waited for).
	Late, LateBy time.Duration
	LateStream   string
	Err          error
}

// Status is the snapshot buffer's state.
type Status struct {
	Bytes, MaxBytes int64         // held now (the open chunk aside), and the bound
	PeakBytes       int64         // the most held at once
	Span            time.Duration // receive time the held chunks cover
	Chunks          int
	Open            bool   // a window is open: a snapshot is coming
	Finishing       int    // closed windows whose snapshots are being written
	Written         int    // snapshots written
	Lost            uint64 // records dropped for want of room: LostBound + LostBehind
	// LostBound were dropped because the open window alone needs more
	// than the bound (its journal could not be written, and --after at
	// the rate held exceeds --snapshot-bytes); LostBehind because the
	// disk is slower than the streams: the open window's journal fell
	// behind by the bound, or an earlier snapshot was still being written.
	LostBound, LostBehind uint64
}

// String is the buffer for a status line.
func (s Status) String() string {
	line := fmt.Sprintf("snapshot buffer: %.1f s in %d chunks, %s of %s (peak %s); %d snapshot(s) written",
		s.Span.Seconds(), s.Chunks, ui.Bytes(s.Bytes), ui.Bytes(s.MaxBytes), ui.Bytes(s.PeakBytes), s.Written)
	if s.Open {
		line += "; a snapshot is being taken"
	}
	if s.Finishing > 0 {
		line += fmt.Sprintf("; %d snapshot(s) being written from their journals", s.Finishing)
	}
	if s.LostBound > 0 {
		line += fmt.Sprintf("; %d records dropped by the memory bound (a snapshot window held in memory, its journal not written, needs more than %s: raise the memory bound or shorten the part after the trigger)", s.LostBound, ui.Bytes(s.MaxBytes))
	}
	if s.LostBehind > 0 {
		line += fmt.Sprintf("; %d records dropped while snapshots were written (the disk is slower than the streams)", s.LostBehind)
	}
	return line
}

// Trigger asks for a snapshot.
type Trigger struct {
	logfmt.SnapshotTrigger
	Slug string // names the file: "sigusr1", "query", "max-restarts_vr-r1-state" (see Slug)
	// Done, if set, is told once what became of the snapshot: written,
	// failed, or never taken (Err: ErrEnded).
	Done func(Result)
}

// ErrEnded: the recording ended before the snapshot could be taken.
var ErrEnded = errors.New("snapshot: the recording is over: no snapshot")

// settle is how long after a window's end the snapshotter waits for the
// records received before it, still on their way through the recorder.
const settle = 300 * time.Millisecond

// Output is the recording's output in snapshot mode: a memory writer
// whose chunks it keeps within the budget, windows opened and extended by
// triggers, and a goroutine that writes each window out as a log
// (write.go). The recorder's writer goroutine calls it; keep runs on the
// memory writer's stage goroutine, the writes on their own.
type Output struct {
	opts Options
	sc   Config
	mw   *logfmt.Writer
	defs []*logfmt.Channel // in id order
	done chan struct{}
	// recording names this recorder run in every snapshot it writes
	recording string
	// epoch is the recording's session epoch: the t_ns of the first state
	// sample written (hasEpoch; the writer goroutine sets it, under mu).
	epoch    int64
	hasEpoch bool
	// arrivals are the streams' delays (lateness.go); lastRecv the latest
	// receive stamp written, lastData that of a data record (not the
	// recorder's own clock probes and heartbeats, which go on while the
	// streams are silent); stallFrom and stallTo the latest span in which
	// the recorder received nothing at all for longer than liveFor
	// (stopped, or starved), which no stream's silence counts (all under
	// mu).
	arrivals           []*arrival // by channel id (nil: none stamped yet)
	lastRecv, lastData int64
	stallFrom, stallTo int64
	// undecided is the receive stamp of the earliest seq gap the recorder
	// has not yet decided as its own loss or the publisher's skip, 0 if
	// none (output.Entry.Undecided: the latest Write or Tick says it;
	// under mu).
	undecided int64
	// writes counts the records written; tickWrites, the count at the
	// last tick (tick).
	writes, tickWrites uint64

	// mu guards what follows (keep, the writes, status). It is never held
	// while calling into mw: the memory writer's stage calls keep, which
	// takes mu, while the writer holds its own lock (a seal waiting for a
	// free job), so a call into mw under mu can deadlock the recorder.
	mu        sync.Mutex
	freed     *sync.Cond // a chunk being written out was released
	queued    *sync.Cond // a window was opened, got a chunk or closed, or the recording ended
	open      *window    // the window triggers extend; nil when none
	queue     []*window  // windows to write, the open one last; the first is being written
	ending    bool       // no more windows
	ring      []*kept    // oldest first
	held      int64
	peak      int64
	newest    int64   // latest receive stamp kept
	first     int64   // first receive stamp kept (0: none yet)
	squeezed  int64   // latest receive stamp the memory bound evicted
	lost      uint64  // records dropped for want of room (dropped)
	lostBound uint64  // of lost, those dropped because the open window alone filled the bound
	fillRate  float64 // bytes/s held at the first fill
	drops     []dropMark
	filled    bool    // the memory bound has evicted: the shortfall was said
	said      float64 // the seconds the bound was last said to hold (recheck)
	saidAt    int64   // the newest receive stamp then
	starved   bool    // the last chunk found no room after pinWait: the next ones do not wait
	lagging   bool    // the journal fell behind: the open window's oldest part goes without waiting
	files     []string
	written   int64
	snapshots int
	err       error // the first snapshot that could not be written

	openJournal func(path string) (journalFile, error) // tests replace it
	now         func() int64                           // the clock of tick (tests replace it)
	pinWait     time.Duration                          // pinWait; tests on a loaded machine raise it
}

// kept is a chunk in the ring; pins count the windows that need it.
type kept struct {
	c                *logfmt.Chunk
	size             int64
	min, max         int64 // receive-time range (mono)
	minWall, maxWall int64 // the wall stamps of the records at min and max
	pins             int
	gone             bool // evicted: c's memory is recycled, what is known of it is min and max
}

// window is a snapshot being taken: the receive-time window it holds, and
// the chunks it needs, pinned, appended while it is open.
type window struct {
	from, to int64 // mono, both included
	lastTrig int64 // mono of the latest trigger (the after part is counted from it)
	triggers []Trigger
	count    int
	chunks   []*kept
	closed   bool // no more chunks; to is final
	drops    map[string]uint64
	head     int   // chunks[:head] were left out (cut)
	cut      bool  // the memory bound left out the oldest part before the trigger
	busy     *kept // the chunk the journal is writing
	short    string
	// The journal (snapshotwrite.go): chunks[:disk] are in it, unpinned
	// (but those held); jchunks are its chunks in the file, all known good.
	disk, jchunks int
	jbytes        int64 // in the journal
	jstate        journalState
	jdone         bool   // the journal is finished: the snapshot may be written
	name          string // the snapshot's name, held by its journal ("" when none could be created)
	jpath         string // the journal, "" when none is needed
	slow          bool   // the journal fell behind: the cut was the disk's
	// held are chunks in the journal still pinned until the window
	// closes, so that its end is found in memory (span): they may hold
	// records past it. edge is the chunk in the journal at the window's
	// start: edgeFirst its first record from edgeFrom (edgeOK: it has one).
	held      []*kept
	edge      *kept
	edgeFrom  int64
	edgeFirst logfmt.RecvStamps
	edgeOK    bool
	// fromWall and toWall are the wall stamps of the window's first and
	// last records, once it is closed (0: none)
	fromWall, toWall int64
	// A stream received late (lateness.go): asked is the end before it
	// moved (heldOpen); lateName the stream received latest, by lateBy;
	// behind the one still short when the wait ended, complete to
	// behindTo.
	asked int64
	// lastData is the latest data record's receive stamp in the window
	// (snapshotter.lastData); lateTo that of the latest record received
	// past its end that would have been in it on time (captured in it).
	lastData, lateTo             int64
	lateName, behind             string
	lateBy, behindTo, behindLate int64
}

// releaseHeld unpins the chunks w holds for its end that its end no
// longer needs: all once it is closed (mu held; the caller broadcasts
// freed).
func (w *window) releaseHeld() {
	kept := w.held[:0]
	for _, k := range w.held {
		if w.closed || k.max <= w.to {
			k.pins--
		} else {
			kept = append(kept, k)
		}
	}
	clear(w.held[len(kept):])
	w.held = kept
}

// journalState is how a window's journal is doing.
type journalState uint8

const (
	journalPending journalState = iota // being created: chunks wait for it
	journalLive                        // it takes every chunk, and unpins it
	journalDead                        // it could not be written: chunks stay pinned
)

// next is the index of the oldest chunk of w neither left out nor in its
// journal (mu held).
func (w *window) next() int { return max(w.head, w.disk) }

// heldOpen reports whether w's end moved past the one asked, to hold
// records received late (dueLocked).
func (w *window) heldOpen() bool { return w.asked > 0 && w.to > w.asked }

// dropMark is recorder drops booked at a time, so a snapshot carries the
// drops of its window.
type dropMark struct {
	mono int64
	name string
	n    uint64
	why  dropCause
}

// dropCause is why records found no room.
type dropCause uint8

const (
	dropBehind   dropCause = iota // an earlier snapshot was being written
	dropBound                     // the open window alone, held in memory (no journal), filled the bound
	dropJournal                   // the open window's journal fell behind the streams by the bound
	dropUpstream                  // lost before the buffer: the transport's or the recorder's queues (addDrops)
)

// New starts a snapshot output: nothing is written until a Trigger.
func New(opts Options) (*Output, error) {
	s := &Output{opts: opts, sc: opts.Config, done: make(chan struct{}), recording: recordingID(),
		openJournal: openJournal, pinWait: pinWait, now: clock.MonoNow}
	s.freed, s.queued = sync.NewCond(&s.mu), sync.NewCond(&s.mu)
	mw, err := logfmt.NewMemoryWriter(logfmt.WriterOptions{FlushInterval: opts.FlushInterval}, s.keep)
	if err != nil {
		return nil, err
	}
	s.mw = mw
	go func() { defer close(s.done); s.writeAll() }()
	return s, nil
}

// keep takes a sealed chunk into the ring, evicting the oldest chunks the
// budget and the time span no longer need; the open window takes it.
// A chunk a window still needs is never evicted: keep waits up to pinWait
// for the writing to release the oldest, then drops the new chunk, and
// the next ones at once until one finds room, their records counted as
// recorder drops in the snapshots that cover them, so that neither memory
// nor the recording's backlog grows when the disk is slower than the
// streams. A chunk the open window's journal is about to take is waited
// for the same way. The oldest part of an open window before its trigger
// gives way to its after part (cut): at once when the window has no
// journal, after that wait when its journal fell behind; then the after
// part is cut short too, and the snapshot says so.
func (s *Output) keep(c *logfmt.Chunk) {
	info := c.Info()
	k := &kept{c: c, size: int64(c.Size()), min: info.MinMonoNs, max: info.MaxMonoNs, minWall: info.MinWallNs, maxWall: info.MaxWallNs}
	var stops []*time.Timer
	s.mu.Lock()
	defer s.mu.Unlock()
	var deadline time.Time
	wait := func() bool { // for the chunks being written to release the oldest, pinWait at most
		if deadline.IsZero() {
			deadline = time.Now().Add(s.pinWait)
			stops = append(stops, time.AfterFunc(s.pinWait, func() { s.mu.Lock(); s.freed.Broadcast(); s.mu.Unlock() }))
		}
		if !time.Now().Before(deadline) {
			return false
		}
		s.freed.Wait()
		return true
	}
	defer func() { // the wakeup, once keep returns
		for _, t := range stops {
			t.Stop()
		}
	}()
	if !s.filled && len(s.ring) > 0 && s.held+k.size > s.sc.MaxBytes {
		s.filled = true
		s.sayShortfall(k)
	}
	cut, full := false, false // full: the bound evicted, so the ring spans what it holds
	for len(s.ring) > 0 && s.held+k.size > s.sc.MaxBytes {
		switch front := s.ring[0]; {
		case s.cuttable(front) && s.open.busy == front: // once the journal has it: one chunk's write
			s.freed.Wait()
		case s.cuttable(front) && s.open.jstate != journalDead && !s.lagging && wait(): // the journal takes it soon
		case s.cuttable(front):
			if s.open.jstate != journalDead {
				s.lagging, s.open.slow = true, true // the disk does not keep up: no new wait for the next chunks
			}
			s.cut(front)
			cut = true
		case front.pins > 0 && s.starved: // still no room: no new wait, which would back up the recording
			s.dropped(info)
			s.mw.Recycle(c)
			return
		case front.pins > 0 && wait():
		case front.pins > 0:
			s.starved = true
			s.dropped(info)
			s.mw.Recycle(c)
			return
		default:
			s.squeezed = max(s.squeezed, front.max)
			s.evict()
			full = true
		}
	}
	if !cut {
		s.lagging = false // room without leaving anything out: the journal keeps up again
	}
	s.starved = false
	s.ring = append(s.ring, k)
	s.held += k.size
	s.peak = max(s.peak, s.held)
	s.newest = max(s.newest, k.max)
	if s.first == 0 || k.min < s.first {
		s.first = k.min
	}
	if w := s.open; w != nil && k.max >= w.from {
		k.pins++
		w.chunks = append(w.chunks, k)
		s.queued.Broadcast()
	}
	horizon := s.newest - s.sc.Before.Nanoseconds() - settle.Nanoseconds()
	for len(s.ring) > 0 && s.ring[0].pins == 0 && s.ring[0].max < horizon {
		s.evict()
	}
	if full {
		s.recheck()
	}
}

// recheck says again what the memory bound holds once the ring has turned
// over since it was said (or since a window or drops, which shape the
// ring), if it now holds a tenth more or less and less than asked: the
// first fill's estimate comes from the recording's first seconds, and the
// rate changes (mu held).
func (s *Output) recheck() {
	if !s.filled || s.open != nil || len(s.ring) == 0 || s.ring[0].min <= s.saidAt || s.sc.OnNotice == nil {
		return
	}
	span := float64(s.newest-s.ring[0].min) / 1e9
	if span <= 0 || s.held <= 0 {
		return
	}
	rate := float64(s.held) / span // the buffer's bytes per second of the streams
	held := float64(s.sc.MaxBytes) / rate
	said := s.said
	s.saidAt = s.newest
	need := (s.sc.Before + settle).Seconds()
	if held >= need || (said > 0 && held > said*0.9 && held < said*1.1) {
		return
	}
	s.said = held // what the next recheck compares with: what was said
	was := ""
	if said > 0 {
		was = fmt.Sprintf("%.1f s when said before, ", said)
	}
	s.sc.OnNotice(fmt.Sprintf("snapshot buffer: %s now holds %.1f s of the streams (%sthe buffer takes %.1f MB/s now): a snapshot holds about %.1f s before its trigger, %s asked",
		ui.Bytes(s.sc.MaxBytes), held, was, rate/1e6, held, s.sc.Before))
}

// cuttable reports whether front, the ring's oldest chunk, is the oldest
// part of the open window before its first trigger not in its journal,
// needed by nothing else (mu held): the memory bound leaves it out of the
// window, so that the part after the trigger fits.
func (s *Output) cuttable(front *kept) bool {
	w := s.open
	if w == nil {
		return false
	}
	i := w.next()
	return front.pins == 1 && i < len(w.chunks) && w.chunks[i] == front && front.max < w.triggers[0].MonoNs
}

// cut leaves front out of the open window and evicts it (mu held); what
// its journal holds before it is left out too: a window is contiguous.
func (s *Output) cut(front *kept) {
	w := s.open
	i := w.next()
	w.chunks[i] = nil
	w.head = i + 1
	w.from = max(w.from, front.max+1)
	w.cut = true
	front.pins--
	s.squeezed = max(s.squeezed, front.max)
	s.evict()
}

// pinWait is how long keep waits for a snapshot being written to release
// the oldest chunk before it drops the newest: long enough for a disk
// that keeps up, short enough that the recording's backlog stays small.
const pinWait = 100 * time.Millisecond

// rate is the bytes per second of receive time the ring holds, with k, the
// chunk arriving (mu held), over its newest half: at the first fill the
// ring reaches back to the recording's start, whose first seconds (a
// camera found after the states) are not the current rate; 0 before a
// tenth of a second is held.
func (s *Output) rate(k *kept) float64 {
	if len(s.ring) == 0 {
		return 0
	}
	var bytes int64
	to, from := s.newest, s.newest
	if k != nil {
		bytes, to, from = k.size, max(to, k.max), k.min
	}
	span := to - s.ring[0].min
	if span < int64(100*time.Millisecond) {
		return 0
	}
	for i := len(s.ring) - 1; i >= 0 && to-from < span/2; i-- {
		bytes, from = bytes+s.ring[i].size, min(from, s.ring[i].min)
	}
	return float64(bytes) / (float64(max(to-from, 1)) / 1e9)
}

// sayShortfall tells, at the first fill of the buffer, what the memory
// bound holds of the current rate against the part before the trigger
// asked (mu held): the part after it goes to the journal as it comes, and
// needs no room while the disk keeps up.
func (s *Output) sayShortfall(k *kept) {
	rate := s.rate(k)
	s.fillRate = rate
	if rate <= 0 || s.sc.OnNotice == nil {
		return
	}
	holds := float64(s.sc.MaxBytes) / rate
	s.said, s.saidAt = holds, max(s.newest, k.max) // recheck says it again once the ring turned over
	need := (s.sc.Before + settle).Seconds()
	if holds >= need {
		return
	}
	s.sc.OnNotice(fmt.Sprintf("snapshot buffer: %s holds about %.1f s of the current %.0f MB/s; a window of %s before the trigger needs about %s in memory: a snapshot holds about %.1f s before its trigger, and all of the %s after it, written to disk as it comes (raise the memory bound, or lower the rate)",
		ui.Bytes(s.sc.MaxBytes), holds, rate/1e6, s.sc.Before, ui.Bytes(int64(rate*need)), holds, s.sc.After))
}

// dropped books the records of a chunk that found no room (mu held).
func (s *Output) dropped(info logfmt.ChunkInfo) {
	s.saidAt = max(s.saidAt, info.MaxMonoNs) // the ring's span is no rate until it turns over
	why := dropBehind
	if s.open != nil && len(s.queue) == 1 { // only the open window pins: its own size or its journal, not an earlier snapshot
		why = dropJournal
		if s.open.jstate == journalDead {
			why = dropBound
		}
	}
	for _, cc := range info.Channels {
		if int(cc.Channel) <= len(s.defs) && cc.Channel > 0 {
			s.drops = append(s.drops, dropMark{mono: info.MaxMonoNs, name: s.defs[cc.Channel-1].Name, n: uint64(cc.Records), why: why})
			s.lost += uint64(cc.Records)
			if why == dropBound {
				s.lostBound += uint64(cc.Records)
			}
		}
	}
}

// evict drops the oldest chunk (mu held), and the drops booked up to it
// that no window still open needs (one whose journal took the chunk
// counts them when it closes).
func (s *Output) evict() {
	k := s.ring[0]
	s.ring[0] = nil
	s.ring = s.ring[1:]
	s.held -= k.size
	k.gone = true
	s.mw.Recycle(k.c) // unpinned: in no file writer's queue
	upto := k.max
	if s.open != nil {
		upto = min(upto, s.open.from-1)
	}
	for len(s.drops) > 0 && s.drops[0].mono <= upto {
		s.drops = s.drops[1:]
	}
}

// Trigger opens a window, or extends the open one.
func (s *Output) Trigger(t Trigger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.open; w != nil {
		w.to = max(w.to, t.MonoNs+s.sc.After.Nanoseconds())
		w.lastTrig = max(w.lastTrig, t.MonoNs)
		w.count++
		if len(w.triggers) < logfmt.MaxSnapshotTriggers || t.Done != nil {
			w.triggers = append(w.triggers, t) // a query's trigger is kept to be answered
		}
		return
	}
	w := &window{from: t.MonoNs - s.sc.Before.Nanoseconds(), to: t.MonoNs + s.sc.After.Nanoseconds(), lastTrig: t.MonoNs, triggers: []Trigger{t}, count: 1,
		lastData: s.lastData}
	i := 0
	for i < len(s.ring) && s.ring[i].max < w.from {
		i++
	}
	for _, k := range s.ring[i:] {
		k.pins++
		w.chunks = append(w.chunks, k)
	}
	s.open = w
	s.resetLate()
	s.queue = append(s.queue, w)
	s.queued.Broadcast()
	go s.journal(w) // at once, also while an earlier snapshot is written
}

// due closes the open window once now (a receive stamp, or the clock) is
// past its end by the settling time, and every live stream has received
// what was captured up to it (lateWait at most): the end then moves to the
// latest record written.
func (s *Output) due(now int64) error {
	s.mu.Lock()
	closing := s.dueLocked(now)
	s.mu.Unlock()
	if !closing {
		return nil
	}
	return s.closeWindow(false)
}

// dueLocked is due's decision (mu held): true when the open window is to
// be closed, its end moved already.
func (s *Output) dueLocked(now int64) bool {
	w := s.open
	if w == nil || now < w.to+settle.Nanoseconds() {
		return false
	}
	if a := s.behind(w.to); a != nil {
		if now < w.to+(settle+lateWait).Nanoseconds() {
			return false
		}
		w.behind, w.behindTo, w.behindLate = a.name, s.complete(a), s.lateBy(a)
	}
	if now < w.to+(settle+lateWait).Nanoseconds() {
		if at := s.undecided; at > 0 && at <= max(w.to, w.lateTo) {
			return false // a loss in the window is decided a drain later: counted in it, not after it closed
		}
	}
	w.asked = w.to
	w.to = max(w.to, w.lateTo) // what arrived late, captured in the window
	return true
}

// closeWindow ends the open window once every record received so far is
// kept: at its end, or where the recording ended.
func (s *Output) closeWindow(ended bool) error {
	if err := s.mw.Flush(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open != nil {
		to, end := s.open.to, ""
		if ended && s.newest < to {
			to = s.newest
			trig := "the trigger"
			if s.open.count > 1 {
				trig = "the last trigger"
			}
			end = fmt.Sprintf("the recording ended %.3f s after %s, %s asked", float64(max(0, to-s.open.lastTrig))/1e9, trig, s.sc.After)
		}
		s.closeLocked(to, end)
	}
	return nil
}

// span is the receive times of w's first and last records in its window,
// -1 if it has none (mu held). Only the chunks at the window's edges are
// read, to find their first and last record inside it.
func (s *Output) span(w *window) (oldest, last int64) {
	oldest, last = -1, -1
	for _, k := range w.chunks {
		if k == nil || k.max < w.from || k.min > w.to {
			continue
		}
		if oldest >= 0 && k.max <= w.to {
			last = max(last, k.max)
			continue
		}
		var first, end int64
		var ok bool
		var err error
		switch {
		case k.gone && k == w.edge && w.edgeFrom == w.from: // the journal read its start
			first, end, ok = w.edgeFirst.MonoNs, min(k.max, w.to), w.edgeOK
		case k.gone: // in the journal, inside the window (the journal holds those that may pass its end)
			first, end, ok = max(k.min, w.from), min(k.max, w.to), true
		default:
			var f, l logfmt.RecvStamps
			f, l, ok, err = k.c.Span(w.from, w.to)
			first, end = f.MonoNs, l.MonoNs
		}
		if err != nil { // a chunk this recorder sealed: cannot be, but its range is what is known
			first, end, ok = max(k.min, w.from), min(k.max, w.to), true
		}
		if ok {
			if oldest < 0 {
				oldest = first
			}
			last = max(last, end)
		}
	}
	return oldest, last
}

// wallAt is the wall stamp of w's record received at mono (one of its
// edges), 0 if it is not known: the window's ends on the wall clock are
// its records' own stamps, not its mono ends shifted by an offset (mu
// held).
func (s *Output) wallAt(w *window, mono int64) int64 {
	if w.edge != nil && w.edgeOK && w.edgeFirst.MonoNs == mono {
		return w.edgeFirst.WallNs
	}
	for _, k := range w.chunks {
		switch {
		case k == nil || mono < k.min || mono > k.max:
		case mono == k.min:
			return k.minWall
		case mono == k.max:
			return k.maxWall
		case !k.gone:
			if f, _, ok, err := k.c.Span(mono, mono); err == nil && ok {
				return f.WallNs
			}
		}
	}
	return 0
}

// closeLocked ends the open window at to: its chunks are final, and what
// it holds is said (mu held). The window starts at its first record: a
// start the memory bound, the recording's start or drops moved is said,
// and its drops are those booked in it.
func (s *Output) closeLocked(to int64, end string) {
	w := s.open
	s.open = nil
	w.to = min(w.to, to)
	w.closed = true
	var why []string
	t0 := w.triggers[0].MonoNs
	oldest, last := s.span(w)
	if w.heldOpen() {
		w.lastData = max(w.lastData, w.lateTo)
	}
	if w.lastData > 0 && w.lastData >= w.from && w.lastData < last {
		last = w.lastData // the window ends with its data, not with a clock probe answered while the streams were silent
	}
	before := func(from int64) float64 { return max(0, float64(t0-from)/1e9) }
	switch {
	case oldest < 0:
		why = append(why, "nothing was received in the window")
	case oldest > w.from:
		late := s.dropsIn(w.from, oldest-1)
		switch {
		case late > 0:
			why = append(why, fmt.Sprintf("the window starts %.2f s late: %d records dropped while an earlier snapshot was written", float64(oldest-w.from)/1e9, late))
		case w.cut && s.dropsBound(oldest, w.to) > 0: // the after part did not fit either
			why = append(why, fmt.Sprintf("the memory bound (%s) left out the part before the trigger to make room for the part after it: it holds %.3f s before the trigger, %s asked",
				ui.Bytes(s.sc.MaxBytes), before(oldest), s.sc.Before))
		case w.cut && w.slow:
			why = append(why, fmt.Sprintf("the disk did not keep up with the journal: the memory bound (%s) left out the oldest part before the trigger to keep the part after it: it holds %.3f s before the trigger, %s asked",
				ui.Bytes(s.sc.MaxBytes), before(oldest), s.sc.Before))
		case w.cut:
			why = append(why, fmt.Sprintf("the memory bound (%s) kept the %s after the trigger by leaving out the oldest part before it: it holds %.3f s before the trigger, %s asked",
				ui.Bytes(s.sc.MaxBytes), s.sc.After, before(oldest), s.sc.Before))
		case s.squeezed >= w.from:
			why = append(why, fmt.Sprintf("the memory bound (%s) held only %.3f s before the trigger, %s asked", ui.Bytes(s.sc.MaxBytes), before(oldest), s.sc.Before))
		case s.first == oldest || s.first > w.from:
			why = append(why, fmt.Sprintf("the recording started %.3f s before the trigger, %s asked", before(oldest), s.sc.Before))
		case oldest-w.from > int64(time.Second):
			why = append(why, fmt.Sprintf("it holds %.3f s before the trigger, %s asked: nothing kept was received in the %.3f s before that", before(oldest), s.sc.Before, float64(oldest-w.from)/1e9))
		} // else: nothing was received between the two; the window starts at its first record

		w.from = oldest
	}
	w.drops = map[string]uint64{}
	for _, d := range s.drops {
		if d.mono >= w.from && d.mono <= w.to {
			w.drops[d.name] += d.n
		}
	}
	// The after part is what the records hold: last record − last trigger.
	if last >= 0 && end == "" && last < w.to {
		held, gone := float64(max(0, last-w.lastTrig))/1e9, float64(w.to-last)/1e9
		switch bound, slow, all := s.dropsBound(last+1, w.to), s.dropsFor(last+1, w.to, dropJournal), s.dropsIn(last+1, w.to); {
		case slow > 0:
			why = append(why, fmt.Sprintf("it holds %.3f s after the trigger of the %s asked: the disk did not keep up with the journal, which fell behind the streams by the memory bound (%s); %d records dropped by the recorder in the window",
				held, s.sc.After, ui.Bytes(s.sc.MaxBytes), s.dropsIn(w.from, w.to)))
		case bound > 0:
			rate := s.fillRate // measured before the drops: the ring now spans what was dropped
			if rate <= 0 {
				rate = s.rate(nil)
			}
			why = append(why, fmt.Sprintf("the memory bound (%s) held %.3f s after the trigger of the %s asked: %s after the trigger at the current %.0f MB/s needs a bound of about %s; %d records dropped by the recorder in the window (the memory bound: the window needs more than the bound)",
				ui.Bytes(s.sc.MaxBytes), held, s.sc.After, s.sc.After, rate/1e6, ui.Bytes(int64(rate*(s.sc.After+settle).Seconds())), s.dropsIn(w.from, w.to)))
			if all > bound {
				why = append(why, fmt.Sprintf("%d more records dropped while an earlier snapshot was written (the disk is slower than the streams)", all-bound))
			}
		case all > 0:
			why = append(why, fmt.Sprintf("it holds %.3f s after the trigger of the %s asked: %d records dropped by the recorder in the last %.3f s of the window while an earlier snapshot was written (the disk is slower than the streams)", held, s.sc.After, all, gone))
		case w.to-last > s.silence():
			why = append(why, fmt.Sprintf("it holds %.3f s after the trigger of the %s asked: nothing was received in the last %.3f s of the window", held, s.sc.After, gone))
		}
	} else if n := s.dropsIn(w.from, w.to); n > 0 && end == "" {
		cause := dropBehind
		if s.dropsBound(w.from, w.to) > 0 {
			cause = dropBound
		} else if s.dropsFor(w.from, w.to, dropJournal) > 0 {
			cause = dropJournal
		}
		why = append(why, fmt.Sprintf("%d records dropped by the recorder in the window (%s)", n, dropWhy(cause)))
	}
	if n := s.dropsFor(w.from, w.to, dropUpstream); n > 0 {
		why = append(why, fmt.Sprintf("%d records lost in the window before the buffer (the transport's or the recorder's queues), counted as recorder drops", n))
	}
	if last >= 0 {
		w.to = min(w.to, last) // the window is its records
		w.fromWall, w.toWall = s.wallAt(w, w.from), s.wallAt(w, w.to)
	}
	if w.behind != "" && end == "" {
		held := fmt.Sprintf("records captured only %.3f s after the trigger", float64(w.behindTo-w.lastTrig)/1e9)
		if w.behindTo <= w.lastTrig {
			held = fmt.Sprintf("no record captured after the trigger (its newest, %.3f s before it)", float64(w.lastTrig-w.behindTo)/1e9)
		}
		why = append(why, fmt.Sprintf("%s holds %s: they arrived up to %.2f s late, and a window waits %s at most past its end for them",
			w.behind, held, float64(w.behindLate)/1e9, lateWait))
	}
	if a := s.latest(); w.heldOpen() && a != nil {
		w.lateName, w.lateBy = a.name, s.lateBy(a)
	}
	if end != "" {
		why = append(why, end)
	}
	w.short = strings.Join(why, "; ")
	s.saidAt = max(s.saidAt, s.newest) // the ring's span is no rate until it turns over past the window
	w.releaseHeld()                    // its end is found
	s.freed.Broadcast()
	s.queued.Broadcast()
}

// dropsBound counts, of dropsIn, the records the memory bound dropped
// because the open window alone, held in memory, filled it (mu held).
func (s *Output) dropsBound(from, to int64) uint64 { return s.dropsFor(from, to, dropBound) }

// dropsFor counts, of dropsIn, those dropped for why (mu held).
func (s *Output) dropsFor(from, to int64, why dropCause) uint64 {
	var n uint64
	for _, d := range s.drops {
		if d.why == why && d.mono >= from && d.mono <= to {
			n += d.n
		}
	}
	return n
}

// dropsByName sums the records dropped in [from, to] by channel (mu held).
func (s *Output) dropsByName(from, to int64) map[string]uint64 {
	m := map[string]uint64{}
	for _, d := range s.drops {
		if d.mono >= from && d.mono <= to {
			m[d.name] += d.n
		}
	}
	return m
}

// dropWhy is why a snapshot's recorder drops were dropped.
func dropWhy(why dropCause) string {
	switch why {
	case dropBound:
		return "the memory bound: the window, its journal not written, needs more than the bound"
	case dropJournal:
		return "its journal fell behind by the memory bound: the disk is slower than the streams"
	}
	return "while an earlier snapshot was written: the disk is slower than the streams"
}

// dropsIn counts the records dropped for want of room in [from, to] (mu held).
func (s *Output) dropsIn(from, to int64) uint64 {
	var n uint64
	for _, d := range s.drops {
		if d.why != dropUpstream && d.mono >= from && d.mono <= to {
			n += d.n
		}
	}
	return n
}

// create starts the file of a snapshot: BASE_TIME_CAUSE.vrlog, BASE the
// output without .vrlog, TIME the trigger's (UTC, milliseconds), CAUSE
// what triggered it; -N is added when that name is taken.
func (s *Output) create(t Trigger) (*outfile.File, error) {
	for n := 1; ; n++ {
		f, err := outfile.Create(s.snapName(t, n), outfile.Options{Force: s.opts.Force})
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
}

// snapName is the n-th name (from 1) of a snapshot triggered by t.
func (s *Output) snapName(t Trigger, n int) string {
	base := strings.TrimSuffix(s.opts.Base, ".vrlog")
	stamp := time.Unix(0, t.WallNs).UTC().Format("20060102T150405.000Z")
	if n > 1 {
		return fmt.Sprintf("%s_%s_%s-%d.vrlog", base, stamp, t.Slug, n)
	}
	return fmt.Sprintf("%s_%s_%s.vrlog", base, stamp, t.Slug)
}

// ---- output.Output ----

// Define takes the next channel: the memory writer numbers channels in
// the same order, from 1, so a record's channel is its id there.
func (s *Output) Define(d *logfmt.Channel) error {
	if _, err := s.mw.AddChannel(*d); err != nil {
		return fmt.Errorf("snapshot buffer: channel %s: %w", d.Name, err)
	}
	s.mu.Lock()
	s.defs = append(s.defs, d)
	s.mu.Unlock()
	return nil
}

// Drops books recorder drops where they happened, so a snapshot carries
// the drops of its window.
func (s *Output) Drops(ch uint16, n uint64, atMono int64) {
	s.mw.AddDrops(ch, n)
	if atMono == 0 {
		atMono = clock.MonoNow()
	}
	s.mu.Lock()
	if int(ch) <= len(s.defs) && ch > 0 {
		s.drops = append(s.drops, dropMark{mono: atMono, name: s.defs[ch-1].Name, n: n, why: dropUpstream})
	}
	s.mu.Unlock()
}

// Write keeps a record, and closes the open window once the record shows
// it is due.
func (s *Output) Write(e output.Entry) error {
	r := e.Record
	ch, recv, capture, stamped := r.Channel, r.RecvMonoNs, r.CaptureNs, r.HasStamp // r is the writer's once written
	if err := s.mw.WriteOwned(r, e.Release); err != nil {
		return fmt.Errorf("snapshot buffer: %w", err)
	}
	s.mu.Lock() // once per record: the stamps' books and the close's decision
	s.undecided = e.Undecided
	if !s.hasEpoch && stamped && int(ch) <= len(s.defs) && ch > 0 && s.defs[ch-1].Schema == codec.SchemaState {
		s.epoch, s.hasEpoch = capture, true // the session's: the recording's first state sample
	}
	if stamped {
		s.arrived(ch, recv, capture)
	}
	if s.lastRecv > 0 && recv-s.lastRecv > liveFor {
		s.stallFrom, s.stallTo = s.lastRecv, recv
	}
	s.lastRecv = max(s.lastRecv, recv)
	if ch > 0 && int(ch) <= len(s.defs) && s.defs[ch-1].Transport != logfmt.TransportInternal {
		s.lastData = max(s.lastData, recv)
		if w := s.open; w != nil && recv <= w.to {
			w.lastData = max(w.lastData, recv)
		} else if w != nil && stamped {
			s.lateFor(w, ch, recv, capture)
		}
	}
	s.writes++
	closing := s.dueLocked(recv)
	s.mu.Unlock()
	if !closing {
		return nil
	}
	return s.closeWindow(false)
}

// Seal seals the open chunk: one lane, nothing is written ahead.
func (s *Output) Seal(bool) error { return s.mw.Seal() }

// Busy is false: the writer stage has nothing to do first (one lane).
func (s *Output) Busy() bool { return false }

// Tick closes a window by the clock only when no record was written
// since the last tick: while records come, their receive stamps decide
// (a recorder that stalled, stopped or behind a backlog, would otherwise
// close a window before the records received in it are written).
func (s *Output) Tick(undecided int64) error {
	s.mu.Lock()
	s.undecided = undecided
	wrote := s.writes != s.tickWrites
	s.tickWrites = s.writes
	s.mu.Unlock()
	if wrote {
		return nil
	}
	return s.due(s.now())
}

// Close writes the open window, if any, as far as the recording got,
// waits for every snapshot to be written, and answers the triggers that
// came too late; the first snapshot that could not be written is the
// error.
func (s *Output) Close() error {
	var err error
	s.mu.Lock()
	open := s.open != nil
	s.mu.Unlock()
	if open {
		err = s.closeWindow(true)
	}
	s.mu.Lock()
	s.ending = true
	s.queued.Broadcast()
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

// Progress is what the snapshots written and the journals of those to
// come hold on disk, and the raw bytes recorded.
func (s *Output) Progress() output.Progress {
	st := s.mw.Stats() // before mu: see Output.mu
	s.mu.Lock()
	defer s.mu.Unlock()
	p := output.Progress{Files: append([]string(nil), s.files...), BytesWritten: s.written, RawBytes: st.RawBytes, Records: st.Records}
	for _, w := range s.queue {
		p.BytesWritten += w.jbytes
	}
	return p
}

// Status is the buffer's state.
func (s *Output) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Bytes: s.held, MaxBytes: s.sc.MaxBytes, PeakBytes: s.peak, Chunks: len(s.ring), Open: s.open != nil, Written: s.snapshots, Lost: s.lost,
		LostBound: s.lostBound, LostBehind: s.lost - s.lostBound}
	if len(s.ring) > 0 {
		st.Span = time.Duration(s.newest - s.ring[0].min)
	}
	for _, w := range s.queue {
		if w.closed {
			st.Finishing++
		}
	}
	return st
}

// TriggerNow is a trigger with cause, stamped now on the clocks the
// transports stamp samples with.
func TriggerNow(cause string) logfmt.SnapshotTrigger {
	return logfmt.SnapshotTrigger{Cause: cause, WallNs: clock.WallNow(), MonoNs: clock.MonoNow()}
}

// Slug makes text a file-name part: vr/r1/state → vr-r1-state.
func Slug(text string) string {
	return strings.Trim(slugSep.ReplaceAllString(text, "-"), "-")
}

var slugSep = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// recordingID is a random name for one recorder run.
func recordingID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}
