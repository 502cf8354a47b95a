package recorder

import (
	"time"

	"github.com/vrlog/vrlog/logfmt"
)

// ChannelStatus is one channel's live figures.
type ChannelStatus struct {
	Name        string
	Transport   string
	Schema      string
	Msgs        uint64
	Bytes       uint64
	Hz          float64 // over the last second
	MBps        float64 // over the last second
	Skipped     uint64  // publisher-side seq gaps
	Restarts    uint64
	Undecodable uint64
	Drops       uint64 // recorder-side drops
	// Error: the channel matched the selection but could not be opened (it
	// has no records); Warning: what limits its recording. Both are stored
	// in the channel's meta (logfmt.MetaError, logfmt.MetaWarning).
	Error   string
	Warning string
}

// Status is a snapshot of a recording; Summary is the last one.
type Status struct {
	Elapsed      time.Duration
	Files        []string
	BytesWritten int64
	RawBytes     uint64 // in the current file
	Channels     []ChannelStatus
	// Zenoh is the zenoh session's connectivity; nil without a session.
	Zenoh *SessionStatus
	// Snapshot is the snapshot buffer's state; nil unless Config.Snapshot.
	Snapshot *SnapshotStatus
	// DrainDrops (in the Summary) are the records still queued when the
	// drain was cut off (Config.DrainTimeout): dropped, and counted in
	// their channels' Drops like every recorder drop.
	DrainDrops uint64
	// Unwatched (in the Summary) are the snapshot --trigger checks that
	// applied to no recorded channel (livecheck.Watch.Unwatched).
	Unwatched []string
}

// Summary is what Run returns.
type Summary = Status

func (r *rec) snapshot() Status {
	written, raw := r.out.bytes()
	elapsed := time.Since(r.start)
	if end := r.ended.Load(); end != 0 {
		elapsed = time.Duration(end - r.start.UnixNano()) // recording, not draining
	}
	s := Status{Elapsed: elapsed, Files: r.out.paths(), BytesWritten: written, RawBytes: raw, DrainDrops: r.w.drainDrops}
	if r.snap != nil {
		sn := r.snap.status()
		s.Snapshot = &sn
	}
	if r.session != nil {
		z := r.session.status()
		s.Zenoh = &z
	}
	for _, ch := range r.order {
		if ch.def.Name == HeartbeatChannel {
			continue // the recording's own marks, not a channel it captured
		}
		sum := ch.stream.Summary()
		s.Channels = append(s.Channels, ChannelStatus{Name: ch.def.Name, Transport: ch.def.Transport.String(), Schema: ch.def.Schema,
			Msgs: ch.msgs, Bytes: ch.bytes, Hz: ch.hz, MBps: ch.mbps, Skipped: sum.Skipped, Restarts: sum.RestartCount,
			Undecodable: ch.undecodable, Drops: ch.drops, Error: ch.def.Meta[logfmt.MetaError], Warning: ch.def.Meta[logfmt.MetaWarning]})
	}
	return s
}

// status refreshes the per-second rates and reports a snapshot.
func (r *rec) status() {
	for _, ch := range r.order {
		ch.hz = float64(ch.msgs - ch.lastMsgs)
		ch.mbps = float64(ch.bytes-ch.lastBytes) / 1e6
		ch.lastMsgs, ch.lastBytes = ch.msgs, ch.bytes
	}
	if r.cfg.OnStatus != nil {
		r.cfg.OnStatus(r.snapshot())
	}
}

func (r *rec) summary() *Summary {
	s := r.snapshot()
	if r.watch != nil {
		s.Unwatched = r.watch.Unwatched()
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
