package recorder

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Writing the windows out, one after the other, on the snapshotter's own
// goroutine. A window is written twice: while it is open, its chunks go
// to a journal as they come (BASE_TIME_CAUSE.vrlog.partial, the part
// before the trigger at once and synced, the part after as it is
// received), so that a kill -9 keeps what was known, for vrlog recover;
// once it is closed, the snapshot itself is written from memory with what
// only the close knows in its header (the window held, the triggers that
// extended it, what it is short of), read back and renamed into place,
// and the journal is removed.

// writeAll writes the windows, one after the other, until the recording
// ends.
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
		s.mu.Unlock()
		res := s.take(w)
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
		if s.sc.OnSnapshot != nil {
			s.sc.OnSnapshot(res)
		}
	}
}

// take writes window w: its journal while it is open, then the snapshot.
func (s *snapshotter) take(w *window) (res SnapshotResult) {
	s.mu.Lock()
	t0 := w.triggers[0]
	s.mu.Unlock()
	f, err := s.create(t0)
	if err != nil {
		s.waitClosed(w)
		s.release(w)
		res.Err = err
		res.Snapshot.Triggers = []logfmt.SnapshotTrigger{t0.SnapshotTrigger}
		return res
	}
	defer f.Abort()
	j := s.journal(w, t0, f.Path()+".partial")
	res = s.writeWindow(w, f)
	if res.Err == nil {
		j.remove()
	}
	return res
}

// waitClosed waits until w is closed.
func (s *snapshotter) waitClosed(w *window) {
	s.mu.Lock()
	for !w.closed {
		s.queued.Wait()
	}
	s.mu.Unlock()
}

// release unpins the chunks of w still pinned.
func (s *snapshotter) release(w *window) {
	s.mu.Lock()
	for i, k := range w.chunks {
		if k != nil {
			k.pins--
			w.chunks[i] = nil
		}
	}
	s.mu.Unlock()
	s.freed.Broadcast()
}

// journaled is a window's journal, once the window is closed: removed
// when the snapshot is in place.
type journaled struct{ path string }

func (j journaled) remove() {
	if j.path != "" {
		os.Remove(j.path)
	}
}

// journal writes the chunks of w to path as they come, until w is closed:
// the log holds the window from its start as far as the recorder got. A
// journal that cannot be written is said once (OnNotice) and given up:
// the snapshot does not need it.
func (s *snapshotter) journal(w *window, t0 trigger, path string) (j journaled) {
	var lw *logfmt.Writer
	var out *os.File
	var added int
	fail := func(err error) {
		if s.sc.OnNotice != nil {
			s.sc.OnNotice(fmt.Sprintf("snapshot journal %s: %v: a kill -9 before the snapshot is written would lose it", path, err))
		}
		if lw != nil {
			lw.Close()
		}
		if out != nil {
			out.Close()
		}
		os.Remove(path)
		lw, out, j.path = nil, nil, ""
	}
	s.mu.Lock()
	md := s.metadata(w, "the recorder stopped before this window closed (a journal of record --snapshot, written as the window was taken): it holds what was received until then")
	s.mu.Unlock()
	var err error
	if out, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666); err != nil { // written in place, as a recording
		out = nil
		fail(err)
	} else if lw, err = logfmt.NewWriter(out, logfmt.WriterOptions{Metadata: md, FlushInterval: -1, Sync: logfmt.SyncInterval, SyncInterval: time.Second}); err != nil {
		fail(err)
	} else {
		j.path = path
		if s.sc.OnOpen != nil {
			s.sc.OnOpen(t0.SnapshotTrigger, path)
		}
	}
	synced := false
	for n := 0; ; n++ {
		s.mu.Lock()
		for n == len(w.chunks) && !w.closed {
			if lw != nil && !synced { // the part before the trigger is in the file
				s.mu.Unlock()
				synced = true
				if err := lw.Flush(); err == nil {
					err = out.Sync()
					if err != nil {
						fail(err)
					}
				} else {
					fail(err)
				}
				s.mu.Lock()
				continue
			}
			s.queued.Wait()
		}
		if n == len(w.chunks) {
			s.mu.Unlock()
			break
		}
		k, defs, from := w.chunks[n], s.defs, w.from
		if k == nil || lw == nil { // left out by the memory bound, or no journal
			s.mu.Unlock()
			continue
		}
		w.busy = k
		s.mu.Unlock()
		for ; added < len(defs) && lw != nil; added++ {
			if _, err := lw.AddChannel(*defs[added]); err != nil {
				fail(err)
			}
		}
		if lw != nil {
			if _, err := lw.WriteChunk(k.c, from, math.MaxInt64); err != nil {
				fail(err)
			} else if err := lw.Flush(); err != nil { // k may be left out once it is in the file
				fail(err)
			}
		}
		s.mu.Lock()
		w.busy = nil
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
	return j
}

// metadata is the header of w's logs, with short as what it is short of
// (mu held).
func (s *snapshotter) metadata(w *window, short string) map[string]string {
	t0 := w.triggers[0]
	off := t0.WallNs - t0.MonoNs // the recorder's wall minus mono clock, at the trigger
	sn := logfmt.Snapshot{Before: s.sc.Before, After: s.sc.After, TriggerCount: w.count, Short: short,
		FromMonoNs: w.from, ToMonoNs: w.to, FromWallNs: w.from + off, ToWallNs: w.to + off, Recording: s.recording,
		SessionEpochNs: s.epoch, HasSessionEpoch: s.hasEpoch}
	for _, t := range w.triggers[:min(len(w.triggers), logfmt.MaxSnapshotTriggers)] {
		sn.Triggers = append(sn.Triggers, t.SnapshotTrigger)
	}
	md := logMetadata(s.cfg)
	md["tool"] = "vrlog record --snapshot"
	sn.AddTo(md)
	return md
}

// writeWindow writes closed window w as a complete, verified log into f,
// releasing each chunk once it is in the file.
func (s *snapshotter) writeWindow(w *window, f *outfile.File) (res SnapshotResult) {
	s.waitClosed(w)
	defer s.release(w)
	s.mu.Lock()
	md := s.metadata(w, w.short)
	res.Snapshot, _ = parseOwn(md)
	res.Before = time.Duration(max(0, w.triggers[0].MonoNs-w.from))
	res.After = time.Duration(max(0, w.to-w.lastTrig))
	defs := append([]*logfmt.Channel(nil), s.defs...)
	chunks := append([]*kept(nil), w.chunks...)
	drops := w.drops
	s.mu.Unlock()
	res.Path = f.Path()
	fail := func(err error) SnapshotResult {
		res.Err = fmt.Errorf("snapshot %s: %w", res.Path, err)
		return res
	}
	lw, err := logfmt.NewWriter(f, logfmt.WriterOptions{Metadata: md, FlushInterval: -1, Sync: logfmt.SyncOnClose})
	if err != nil {
		return fail(err)
	}
	defer lw.Close()
	ids := map[string]uint16{}
	for _, d := range defs { // the memory writer's ids, in its order
		if ids[d.Name], err = lw.AddChannel(*d); err != nil {
			return fail(err)
		}
	}
	for i, k := range chunks {
		if k == nil {
			continue // left out by the memory bound
		}
		n, err := lw.WriteChunk(k.c, w.from, w.to)
		if err == nil {
			err = lw.Flush() // in the file: the chunk may go
		}
		if err != nil {
			return fail(err)
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

// parseOwn reads back the snapshot metadata the snapshotter made.
func parseOwn(md map[string]string) (logfmt.Snapshot, error) {
	sn, err := logfmt.ParseSnapshot(md)
	if err != nil || sn == nil {
		return logfmt.Snapshot{}, err
	}
	return *sn, nil
}
