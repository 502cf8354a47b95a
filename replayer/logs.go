package replayer

import (
	"time"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/player"
)

// Logs is a replay's inputs opened for a reader other than the
// transports (vrlog view serves them to Foxglove): the logs merged as a
// replay merges them (the same join rule, clock and window), seekable,
// with the recorder's own channels too. Nothing is published.
type Logs struct {
	s     *session
	clock Clock
}

// LogChannel is one channel of the merged logs (channels of one stream in
// several files are one).
type LogChannel struct {
	Name      string
	Transport logfmt.Transport
	Topic     string
	Schema    string
	Meta      map[string]string
	Frame     bool // a frame stream
}

// OpenLogs opens cfg.Files, their channels (cfg.Channels) and window
// (cfg.Window) on cfg.Clock; the other fields are ignored. Errors are a
// *ConfigError or of the kind ErrInput.
func OpenLogs(cfg Config) (*Logs, error) {
	c, _, err := check(Config{Files: cfg.Files, Tolerant: cfg.Tolerant, Clock: cfg.Clock, Window: cfg.Window, Channels: cfg.Channels})
	if err != nil {
		return nil, err
	}
	c.internal = true
	s, err := open(&c, nil)
	if err != nil {
		return nil, err
	}
	return &Logs{s: s, clock: c.Clock}, nil
}

// Channels are the merged channels; a record's player.Rec.Channel indexes
// them.
func (l *Logs) Channels() []LogChannel {
	out := make([]LogChannel, len(l.s.outs))
	for i, o := range l.s.outs {
		out[i] = LogChannel{Name: o.Name, Transport: o.Transport, Topic: o.Topic, Schema: o.Schema, Meta: o.Meta, Frame: o.Frame}
	}
	return out
}

// Source yields the window's records on the clock's keys (player.Rec.Key).
func (l *Logs) Source() player.Seeker { return l.s.src }

// Origin is the window's start (a key) and Span its length.
func (l *Logs) Origin() int64 { return l.s.src.start }

// Span is the window's length in log time.
func (l *Logs) Span() time.Duration { return l.s.span() }

// ToUnix maps a key to unix ns: a receive key (file 0's monotonic clock)
// by file 0's wall - monotonic offset at its start, a capture key as it is.
func (l *Logs) ToUnix(key int64) int64 {
	if l.clock == ClockCapture {
		return key
	}
	return key + l.s.wallOffset
}

// Close closes the logs.
func (l *Logs) Close() { l.s.close() }
