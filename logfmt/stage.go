package logfmt

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// stage is the writer stage: the only goroutine that writes to the file
// after the header. It writes jobs in queue order, waiting for each
// chunk's compression, keeps the chunk index and the stored-byte counts,
// flushes its buffer when the queue runs dry, and syncs per policy.
type stage struct {
	out    io.Writer
	bw     *bufio.Writer
	opts   *WriterOptions
	syncF  func() error
	pieces [][]byte // scratch for groupBuf.pieces

	failed atomic.Bool // set with err: Write's check without the lock
	mu     sync.Mutex  // guards the fields below for Stats and error
	err    error
	off    int64
	index  []ChunkInfo
	defs   map[uint16]*job // channel definitions not written yet
	// chans are the footer's statistics, counted as the chunks reach the
	// file: first and last are in file order, which a chunk sealed ahead
	// (SealAhead) can change from the order of sealing
	chans    map[uint16]*ChannelStats
	syncs    uint64
	lastSync time.Time
	dirty    bool // written since the last sync
}

func newStage(out io.Writer, opts *WriterOptions) *stage {
	s := &stage{out: out, bw: bufio.NewWriterSize(out, 256<<10), opts: opts, defs: map[uint16]*job{}, chans: map[uint16]*ChannelStats{}, lastSync: time.Now()}
	if sy, ok := out.(interface{ Sync() error }); ok {
		s.syncF = sy.Sync
		if f, ok := out.(fder); ok {
			s.syncF = func() error { return fdatasync(f) }
		}
	}
	return s
}

func (s *stage) error() error {
	if !s.failed.Load() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *stage) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = fmt.Errorf("logfmt: write: %w", err)
		s.failed.Store(true)
	}
	s.mu.Unlock()
}

// writeRaw writes b at the current offset (header at creation, footer at
// Close, when the stage goroutine is not running).
func (s *stage) writeRaw(b []byte) error {
	if err := s.error(); err != nil {
		return err
	}
	var n int
	var err error
	if len(b) >= s.bw.Size() && s.bw.Buffered() > 0 {
		// Flush first so that bufio writes b straight from the caller's
		// memory instead of copying its first Available() bytes.
		err = s.bw.Flush()
	}
	if err == nil {
		n, err = s.bw.Write(b)
	}
	s.mu.Lock()
	s.off += int64(n)
	s.dirty = true
	s.mu.Unlock()
	if err != nil {
		s.fail(err)
		return s.error()
	}
	return nil
}

// flush puts everything written so far into the file.
func (s *stage) flush() error { return s.flushOut(true) }

// drain is flush when the queue runs dry: a direct file may keep its
// incomplete last block a little longer (directFile.flush).
func (s *stage) drain() error { return s.flushOut(false) }

func (s *stage) flushOut(force bool) error {
	if err := s.error(); err != nil {
		return err
	}
	err := s.bw.Flush()
	if d, ok := s.out.(*directFile); ok && err == nil {
		err = d.flush(force)
	}
	if err != nil {
		s.fail(err)
		return s.error()
	}
	return nil
}

func (s *stage) sync() error {
	if err := s.flush(); err != nil {
		return err
	}
	if s.syncF == nil {
		return nil
	}
	if err := s.syncF(); err != nil {
		s.fail(fmt.Errorf("sync: %w", err))
		return s.error()
	}
	s.mu.Lock()
	s.syncs++
	s.lastSync = time.Now()
	s.dirty = false
	s.mu.Unlock()
	return nil
}

// run writes the jobs of in, in order, and the chunks of ahead (SealAhead:
// compressed already) before each of them and while it waits for a
// chunk's compression; a chunk written ahead takes the definitions of its
// channels with it when they have not had their turn yet.
func (s *stage) run(in <-chan *job, ahead <-chan *job, free chan<- *job) {
	for {
		var j *job
		select {
		case a := <-ahead:
			s.writeAhead(a, free)
			continue
		case x, ok := <-in:
			if !ok {
				return // Close flushed first (a barrier): ahead is empty
			}
			j = x
		}
		for len(ahead) > 0 { // sealed ahead of j
			s.writeAhead(<-ahead, free)
		}
		switch j.kind {
		case jobChunk:
			s.await(j, ahead, free)
			if m := s.opts.memory; m != nil {
				m.keep(m.kept(j))
			} else {
				s.writeChunk(j)
			}
			for _, g := range j.b.groups[:j.b.ng] {
				g.releaseRefs()
			}
			free <- j
			if s.opts.Sync == SyncOnFlush {
				s.sync()
			}
		case jobSealed:
			s.writeChunk(j)
			if s.opts.Sync == SyncOnFlush {
				s.sync()
			}
		case jobBlock:
			s.writeBlock(j)
		case jobBarrier:
			var err error
			if j.sync || (j.tick && s.dirty && time.Since(s.lastSync) >= s.opts.SyncInterval) {
				err = s.sync()
			} else {
				err = s.flush()
			}
			if j.result != nil {
				j.result <- err
			}
			continue
		}
		if s.opts.Sync == SyncInterval && s.dirty && time.Since(s.lastSync) >= s.opts.SyncInterval {
			s.sync()
		} else if len(in) == 0 {
			s.drain()
		}
	}
}

// await waits for chunk j's compression, writing the chunks sealed ahead
// meanwhile.
func (s *stage) await(j *job, ahead <-chan *job, free chan<- *job) {
	for {
		select {
		case <-j.done:
			return
		case a := <-ahead:
			s.writeAhead(a, free)
		}
	}
}

// define notes a channel definition queued for the stage.
func (s *stage) define(def *job) {
	s.mu.Lock()
	s.defs[def.defines] = def
	s.mu.Unlock()
}

// writeBlock writes a block job, once (a definition may have gone ahead).
func (s *stage) writeBlock(j *job) {
	if j.written {
		return
	}
	j.written = true
	s.writeRaw(j.block)
	if j.defines != 0 {
		s.mu.Lock()
		delete(s.defs, j.defines)
		s.mu.Unlock()
	}
}

// writeAhead writes a chunk of SealAhead, after the definitions of its
// channels that are still queued, and hands its job back.
func (s *stage) writeAhead(j *job, free chan<- *job) {
	<-j.done
	for _, g := range j.b.groups[:j.b.ng] {
		s.mu.Lock()
		def := s.defs[g.ch]
		s.mu.Unlock()
		if def != nil {
			s.writeBlock(def)
		}
	}
	s.writeChunk(j)
	for _, g := range j.b.groups[:j.b.ng] {
		g.releaseRefs()
	}
	free <- j
	if s.opts.Sync == SyncOnFlush || (s.opts.Sync == SyncInterval && time.Since(s.lastSync) >= s.opts.SyncInterval) {
		s.sync()
	} else {
		s.flush() // in the file now, not when the next block comes: what SealAhead is for
	}
}

func (s *stage) writeChunk(j *job) {
	if s.error() != nil {
		return
	}
	start := s.off
	if s.writeRaw(j.head) != nil {
		return
	}
	for _, g := range j.b.groups[:j.b.ng] {
		s.pieces = g.pieces(s.pieces[:0])
		for _, p := range s.pieces {
			if s.writeRaw(p) != nil {
				return
			}
		}
	}
	info := j.info
	info.Offset = start
	info.Channels = slices.Clone(info.Channels)
	s.mu.Lock()
	s.index = append(s.index, info)
	for _, c := range info.Channels {
		s.channel(c.Channel).StoredBytes += uint64(c.StoredBytes)
	}
	if j.kind == jobSealed {
		for _, g := range j.kept {
			s.channel(g.channel).addGroup(g)
		}
	} else {
		for _, g := range j.b.groups[:j.b.ng] {
			s.channel(g.ch).addGroup(g.summary())
		}
	}
	s.mu.Unlock()
}

// channel is the statistics of channel id so far (under mu).
func (s *stage) channel(id uint16) *ChannelStats {
	st := s.chans[id]
	if st == nil {
		st = &ChannelStats{Channel: id}
		s.chans[id] = st
	}
	return st
}
