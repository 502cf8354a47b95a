package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"time"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
)

// Writing the windows out. A window is written twice: while it is open,
// its own goroutine writes its chunks to a journal as they come
// (BASE_TIME_CAUSE.vrlog.partial, the part before the trigger at once and
// synced, the part after as it is received, in place, not synced: a
// fdatasync of a second of camera data would hold the journal back by
// about as long on a disk of 200 MB/s, and the page cache keeps it through
// a kill -9), so that a kill -9 keeps what was known, for vrlog recover;
// a chunk in the journal is
// unpinned, so that the memory bound holds only the ring before the
// trigger and what the journal has not written yet, and --after is held
// whatever the rate while the disk keeps up. Once the window is closed,
// the snapshot itself is written, on the snapshotter's goroutine one
// window after the other, with what only the close knows in its header
// (the window held, the triggers that extended it, what it is short of):
// the journal's chunks copied byte for byte (the edge ones trimmed to the
// window), then those the journal did not take, from memory; it is read
// back and renamed into place, and the journal is removed.

// journalFile is what a journal is written to: a file, opened O_EXCL.
type journalFile interface {
	io.Writer
	Sync() error
	Close() error
}

// openJournal creates a journal (snapshotter.openJournal; tests replace it).
func openJournal(path string) (journalFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666) // written in place, as a recording
	if err != nil {
		return nil, err // a nil *os.File is no journalFile
	}
	return f, nil
}

// writeAll writes the windows, one after the other, until the recording
// ends.
func (s *Output) writeAll() {
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
		s.mu.Unlock()
		res := s.writeWindow(w)
		s.mu.Lock()
		s.queue = s.queue[1:]
		triggers := w.triggers // final: the window is closed
		if res.Err != nil && s.err == nil {
			s.err = res.Err
		}
		if res.Err == nil {
			s.files = append(s.files, res.Path)
			s.written += res.Bytes
			s.snapshots++
		}
		s.mu.Unlock()
		for _, t := range triggers {
			if t.Done == nil {
				continue
			}
			t.Done(res)
		}
		if s.sc.OnSnapshot != nil {
			s.sc.OnSnapshot(res)
		}
	}
}

// release unpins the chunks of w still pinned: those the journal did not
// take (mu not held).
func (s *Output) release(w *window) {
	s.mu.Lock()
	for i := w.disk; i < len(w.chunks); i++ {
		if k := w.chunks[i]; k != nil {
			k.pins--
			w.chunks[i] = nil
		}
	}
	s.mu.Unlock()
	s.freed.Broadcast()
}

// reserve names w's snapshot and creates its journal, NAME.partial, which
// holds the name: BASE_TIME_CAUSE.vrlog (snapName), the first N whose
// journal is not there (a journal a kill -9 left is never replaced) nor,
// without --force, the snapshot.
func (s *Output) reserve(t Trigger) (name string, out journalFile, err error) {
	for n := 1; ; n++ {
		name = s.snapName(t, n)
		if _, err := os.Lstat(name); err == nil && !s.opts.Force {
			continue
		}
		out, err = s.openJournal(name + ".partial")
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, out, err
	}
}

// journal writes the chunks of w to its journal as they come, until w is
// closed, unpinning each once it is in the file: the log holds the window
// from its start as far as the recorder got, with the recorder's drops in
// it. A journal that cannot be written is said once (OnNotice) and given
// up: the chunks it has not taken stay pinned, and the snapshot takes
// them from memory (within the memory bound, as without a journal).
func (s *Output) journal(w *window) {
	s.mu.Lock()
	t0 := w.triggers[0]
	md := s.metadata(w, "the recorder stopped before this snapshot was written (a snapshot's journal, written as the window was taken): it holds what the journal had written by then (docs/cli.md: what a kill -9 loses)")
	s.mu.Unlock()
	name, out, err := s.reserve(t0)
	path := name + ".partial"
	var lw *logfmt.Writer
	created := err == nil
	fail := func(err error) { // mu not held
		if s.sc.OnNotice != nil {
			s.sc.OnNotice(fmt.Sprintf("snapshot journal %s: %v: a kill -9 before the snapshot is written would lose it, and the rest of the window is held in memory (the part after the trigger only while it fits in the memory bound)", path, err))
		}
		if lw != nil {
			lw.Close()
			lw = nil
		}
		if out != nil {
			out.Close()
			out = nil
		}
		s.mu.Lock()
		w.jstate = journalDead
		if created && w.jchunks == 0 { // nothing of it is needed
			os.Remove(path)
			w.jpath = ""
		}
		s.mu.Unlock()
		s.freed.Broadcast()
	}
	if err != nil {
		out = nil
		s.mu.Lock()
		w.name = "" // not reserved: the snapshot is named when written
		s.mu.Unlock()
		fail(err)
	} else if lw, err = logfmt.NewWriter(out, logfmt.WriterOptions{Metadata: md, FlushInterval: -1, Sync: logfmt.SyncNone}); err != nil {
		s.mu.Lock()
		w.name, w.jpath = name, path
		s.mu.Unlock()
		fail(err)
	} else {
		s.mu.Lock()
		w.name, w.jpath, w.jstate = name, path, journalLive
		s.mu.Unlock()
		s.freed.Broadcast()
		if s.sc.OnOpen != nil {
			s.sc.OnOpen(t0.SnapshotTrigger, path)
		}
	}
	synced := false
	syncNow := func() {
		if lw == nil {
			return
		}
		if err := out.Sync(); err != nil {
			fail(err)
		}
	}
	var added int
	written := map[string]uint64{} // the drops in the journal
	for n := 0; ; n++ {
		s.mu.Lock()
		for n == len(w.chunks) && !w.closed {
			if lw != nil && !synced { // the part before the trigger is in the file
				s.mu.Unlock()
				synced = true
				syncNow()
				s.mu.Lock()
				continue
			}
			s.queued.Wait()
		}
		if n == len(w.chunks) {
			s.mu.Unlock()
			break
		}
		k := w.chunks[n]
		if lw == nil { // no journal: the chunks stay pinned
			s.mu.Unlock()
			continue
		}
		if k == nil { // left out by the memory bound
			w.disk = n + 1
			s.mu.Unlock()
			s.freed.Broadcast() // for yield
			continue
		}
		w.busy = k
		defs, from := s.defs, w.from
		drops := s.dropsByName(w.from, k.max)
		s.mu.Unlock()
		for ; added < len(defs) && lw != nil; added++ {
			if _, err := lw.AddChannel(*defs[added]); err != nil {
				fail(err)
			}
		}
		for id, d := range defs[:added] {
			if n := drops[d.Name]; n > written[d.Name] && lw != nil {
				lw.AddDrops(uint16(id+1), n-written[d.Name]) // the memory writer's ids, in its order
				written[d.Name] = n
			}
		}
		ok := false
		var first logfmt.RecvStamps
		var hasFirst bool
		if k.min < from { // the window's start: its first record there, for span once k's memory is gone
			var err error
			if first, _, hasFirst, err = k.c.Span(from, math.MaxInt64); err != nil {
				first, hasFirst = logfmt.RecvStamps{MonoNs: max(k.min, from)}, true // a chunk this recorder sealed: cannot be
			}
		}
		if lw != nil {
			if _, err := lw.WriteChunk(k.c, from, math.MaxInt64); err != nil {
				fail(err)
			} else if err := lw.Flush(); err != nil { // k may go once it is in the file
				fail(err)
			} else {
				ok = true
			}
		}
		s.mu.Lock()
		w.busy = nil
		if ok {
			w.disk = n + 1
			w.jchunks, w.jbytes = int(lw.Stats().Chunks), lw.Stats().BytesWritten
			if k.min < from {
				w.edge, w.edgeFrom, w.edgeFirst, w.edgeOK = k, from, first, hasFirst
			}
			w.held = append(w.held, k)
			w.releaseHeld() // at once unless it may pass the window's end
		}
		s.mu.Unlock()
		s.freed.Broadcast()
	}
	if lw != nil {
		if err := lw.Close(); err != nil {
			fail(err)
		} else if err := out.Close(); err != nil {
			out = nil
			fail(err)
		}
	}
	s.mu.Lock()
	w.jdone = true
	s.mu.Unlock()
	s.queued.Broadcast()
}

// metadata is the header of w's logs, with short as what it is short of
// (mu held).
func (s *Output) metadata(w *window, short string) map[string]string {
	t0 := w.triggers[0]
	off := t0.WallNs - t0.MonoNs // the recorder's wall minus mono clock, at the trigger
	var open string
	if w.heldOpen() && w.closed {
		open = fmt.Sprintf("%.3f s past its end for %s, received up to %.3f s after capture", float64(w.to-w.asked)/1e9, w.lateName, float64(w.lateBy)/1e9)
	}
	fromWall, toWall := w.from+off, w.to+off // the window asked, before it closed
	if w.fromWall != 0 && w.toWall != 0 {
		fromWall, toWall = w.fromWall, w.toWall // its records' own
	}
	sn := logfmt.Snapshot{Before: s.sc.Before, After: s.sc.After, TriggerCount: w.count, Short: short, HeldOpen: open,
		FromMonoNs: w.from, ToMonoNs: w.to, FromWallNs: fromWall, ToWallNs: toWall, Recording: s.recording,
		SessionEpochNs: s.epoch, HasSessionEpoch: s.hasEpoch}
	for _, t := range w.triggers[:min(len(w.triggers), logfmt.MaxSnapshotTriggers)] {
		sn.Triggers = append(sn.Triggers, t.SnapshotTrigger)
	}
	md := make(map[string]string, len(s.opts.Metadata)+8)
	for k, v := range s.opts.Metadata {
		md[k] = v
	}
	md["tool"] = "vrlog record --snapshot"
	sn.AddTo(md)
	return md
}

// writeWindow writes w, once it is closed and its journal done, as a
// complete, verified log: the journal's chunks, then those still in
// memory, each released once it is in the file; the journal is removed
// once the snapshot is in place (kept, for vrlog recover, when it could
// not be written).
func (s *Output) writeWindow(w *window) (res Result) {
	s.mu.Lock()
	for !w.closed || !w.jdone {
		s.queued.Wait()
	}
	md := s.metadata(w, w.short)
	res.Snapshot, _ = parseOwn(md)
	res.Before = time.Duration(max(0, w.triggers[0].MonoNs-w.from))
	res.After = time.Duration(max(0, w.to-w.lastTrig))
	if w.heldOpen() {
		res.Late, res.LateStream, res.LateBy = time.Duration(w.to-w.asked), w.lateName, time.Duration(w.lateBy)
	}
	defs := append([]*logfmt.Channel(nil), s.defs...)
	t0, name, jpath, jchunks, disk := w.triggers[0], w.name, w.jpath, w.jchunks, w.disk
	chunks := append([]*kept(nil), w.chunks...)
	drops := w.drops
	s.mu.Unlock()
	defer s.release(w)
	var f *outfile.File
	var err error
	if name != "" {
		f, err = outfile.Create(name, outfile.Options{Force: s.opts.Force})
	}
	if name == "" || errors.Is(err, fs.ErrExist) {
		f, err = s.create(t0)
	}
	fail := func(err error) Result {
		if jpath != "" {
			err = fmt.Errorf("%w (its journal %s holds the window: vrlog recover)", err, jpath)
		}
		res.Err = err
		return res
	}
	if err != nil {
		return fail(err)
	}
	defer f.Abort()
	res.Path = f.Path()
	failed := func(err error) Result { return fail(fmt.Errorf("snapshot %s: %w", res.Path, err)) }
	lw, err := logfmt.NewWriter(f, logfmt.WriterOptions{Metadata: md, FlushInterval: -1, Sync: logfmt.SyncOnClose})
	if err != nil {
		return failed(err)
	}
	defer lw.Close()
	ids := map[string]uint16{}
	for _, d := range defs { // the memory writer's ids, in its order
		if ids[d.Name], err = lw.AddChannel(*d); err != nil {
			return failed(err)
		}
	}
	if jchunks > 0 {
		n, err := copyJournal(lw, jpath, jchunks, w.from, w.to, func() { s.yield(w) })
		if err != nil {
			return failed(err)
		}
		res.Records += n
	}
	for i := disk; i < len(chunks); i++ {
		k := chunks[i]
		if k == nil {
			continue // left out by the memory bound
		}
		n, err := lw.WriteChunk(k.c, w.from, w.to)
		if err == nil {
			err = lw.Flush() // in the file: the chunk may go
		}
		if err != nil {
			return failed(err)
		}
		res.Records += n
		s.mu.Lock()
		k.pins--
		w.chunks[i] = nil
		s.mu.Unlock()
		s.freed.Broadcast()
	}
	for name, n := range drops {
		lw.AddDrops(ids[name], n)
	}
	if err := lw.Close(); err != nil {
		return failed(err)
	}
	if err := f.CommitChecked(logfmt.ReadBackCheck(res.Records)); err != nil {
		return fail(err) // outfile names the file
	}
	if st, err := os.Stat(res.Path); err == nil {
		res.Bytes = st.Size()
	}
	if jpath != "" {
		os.Remove(jpath)
	}
	return res
}

// yield waits while the open window's journal has chunks to write, unless
// that window is self: the window being finished is safe in its journal,
// while the open one's chunks are only in memory until its journal takes
// them, so the disk is that journal's first (a kill -9 during a finish
// would otherwise lose the after part of the next window).
func (s *Output) yield(self *window) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		w := s.open
		if w == nil || w == self || w.jstate == journalDead || w.next() >= len(w.chunks) {
			return
		}
		s.freed.Wait() // the journal broadcasts each chunk it wrote; a close too
	}
}

// copyJournal writes the records of the first n chunks of the journal at
// path received in [from, to] to lw: a chunk inside the window byte for
// byte, an edge one trimmed; between runs before each chunk.
func copyJournal(lw *logfmt.Writer, path string, n int, from, to int64, between func()) (uint64, error) {
	r, err := logfmt.Open(path, logfmt.ReaderOptions{})
	if err != nil {
		return 0, fmt.Errorf("its journal: %w", err)
	}
	defer r.Close()
	if len(r.Chunks()) < n {
		return 0, fmt.Errorf("its journal %s: %d chunks, %d written", path, len(r.Chunks()), n)
	}
	var c *logfmt.Chunk
	var records uint64
	for i, ci := range r.Chunks()[:n] {
		if ci.MaxMonoNs < from || ci.MinMonoNs > to {
			continue
		}
		between()
		if c, err = r.ReadChunk(i, c); err != nil {
			return records, fmt.Errorf("its journal: %w", err)
		}
		k, err := lw.WriteChunk(c, from, to)
		if err == nil {
			err = lw.Flush() // c's buffer is read into next
		}
		if err != nil {
			return records, err
		}
		records += k
	}
	return records, nil
}

// parseOwn reads back the snapshot metadata the snapshotter made.
func parseOwn(md map[string]string) (logfmt.Snapshot, error) {
	sn, err := logfmt.ParseSnapshot(md)
	if err != nil || sn == nil {
		return logfmt.Snapshot{}, err
	}
	return *sn, nil
}
