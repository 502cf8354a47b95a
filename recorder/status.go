package recorder

import (
	"time"

	"github.com/vrlog/vrlog/recorder/snapshot"
)

// ChannelStatus is one channel's live figures.
type ChannelStatus struct {
	Name        string
	Transport   string
	Schema      string
	Msgs        uint64 // written
	Bytes       uint64
	Hz          float64 // received, over the last second (also while paused or idle)
	MBps        float64 // received, over the last second
	Skipped     uint64  // publisher-side seq gaps
	Restarts    uint64
	Undecodable uint64
	Drops       uint64 // recorder-side drops
	Unwritten   uint64 // received while paused or idle, not written
	// Error: the channel matched the selection but could not be opened (it
	// has no records); Warning: what limits its recording. Both are stored
	// in the channel's meta (logfmt.MetaError, logfmt.MetaWarning).
	Error   string
	Warning string
}

// Status is a snapshot of a recorder; Summary is the last one.
type Status struct {
	State State
	// Elapsed is how long the transports have been open (while
	// recording), or how long the recording ran (once it ended).
	Elapsed      time.Duration
	Files        []string // every file written, the current one last
	File         string   // the file being written, "" when none is open
	BytesWritten int64
	RawBytes     uint64 // in the current file
	Records      uint64 // in the current file
	Channels     []ChannelStatus
	// Backlog is the bytes received and not yet written: a disk that
	// keeps up holds it near zero; QueueBytes bounds each subscription's.
	Backlog    int64
	QueueBytes int64
	// Zenoh is the zenoh session's connectivity; nil without a session.
	Zenoh *SessionStatus
	// Snapshot is the snapshot buffer's state; nil unless Config.Snapshot.
	Snapshot *snapshot.Status
	// DrainDrops (in the Summary) are the records still queued when the
	// drain was cut off (Config.DrainTimeout): dropped, and counted in
	// their channels' Drops like every recorder drop.
	DrainDrops uint64
	// Unwatched (in the Summary) are the snapshot --snapshot-on checks that
	// applied to no recorded channel (livecheck.Watch.Unwatched).
	Unwatched []string
}

// Summary is what Run returns.
type Summary = Status

// Status is the recorder's status: as published at its latest tick or
// control request, Elapsed brought to now.
func (r *Recorder) Status() Status {
	s := *r.status.Load()
	if s.State != StateStopping || r.w.ended.Load() == 0 {
		s.Elapsed = time.Since(r.started)
	}
	if s.Zenoh != nil && r.watch != nil {
		z := r.watch.status()
		s.Zenoh = &z
	}
	return s
}

// publish makes the status Status returns, on the writer goroutine (the
// books are its own); with notify, Config.OnStatus is told too.
func (r *Recorder) publish(notify bool) {
	s := r.snapshot()
	r.status.Store(&s)
	if notify && r.cfg.OnStatus != nil {
		r.cfg.OnStatus(s)
	}
}

func (r *Recorder) snapshot() Status {
	w := r.w
	p := r.out.Progress()
	elapsed := time.Since(r.started)
	if end := w.ended.Load(); end != 0 && !r.started.IsZero() {
		elapsed = time.Duration(end - r.started.UnixNano()) // recording, not draining
	}
	s := Status{State: w.state(), Elapsed: elapsed, Files: p.Files, BytesWritten: p.BytesWritten, RawBytes: p.RawBytes, Records: p.Records,
		Channels: w.books.channels(), Backlog: w.lanes.queued.Load(), QueueBytes: int64(r.cfg.QueueBytes), DrainDrops: w.books.drainDrops}
	if w.files != nil {
		_, s.File = w.files.Recording()
	}
	if w.snap != nil {
		sn := w.snap.Status()
		s.Snapshot = &sn
	}
	if r.watch != nil {
		z := r.watch.status()
		s.Zenoh = &z
	}
	return s
}

func (r *Recorder) summary() *Summary {
	s := r.snapshot()
	s.State = StateStopping
	if b := r.w.books; b.watch != nil {
		s.Unwatched = b.watch.Unwatched()
	}
	return &s
}

// Failed lists the channels that could not be recorded.
func (s Status) Failed() []ChannelStatus {
	var out []ChannelStatus
	for _, c := range s.Channels {
		if c.Error != "" {
			out = append(out, c)
		}
	}
	return out
}
