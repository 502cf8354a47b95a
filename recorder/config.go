package recorder

import (
	"errors"
	"fmt"
	"time"

	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/livecheck"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/recorder/snapshot"
	"github.com/vrlog/vrlog/schema"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// Config says what to record and how.
type Config struct {
	Output string // log path; with splitting, the base of numbered files
	Force  bool   // overwrite existing files
	// ZenohKeys are key expressions (wildcards allowed); IceoryxServices are
	// pub-sub service names, or patterns with * (one level) and ** (any
	// levels) matched against services as they appear. All records every
	// zenoh key (**) and every iceoryx2 pub-sub service, including ones that
	// appear later.
	ZenohKeys       []string
	IceoryxServices []string
	All             bool
	Zenoh           zenoh.Config
	// Split into numbered files by size (bytes) or duration; MaxFiles > 0
	// keeps only the newest files (a ring).
	SplitSize     int64
	SplitDuration time.Duration
	// Duration > 0 ends the recording that long after it started (the
	// transports open; opening a zenoh session takes a while): the log
	// holds Duration of data, and the Summary's Elapsed says so. 0 records
	// until ctx ends.
	Duration time.Duration
	MaxFiles int
	// Idle opens the transports and writes nothing until Recorder.Start
	// (the control plane's start): a recorder armed on every host.
	Idle bool
	// Compression per channel: the last entry whose Pattern matches the
	// channel's name or topic wins. Default: zstd level 1 for iceoryx2
	// channels (frames: their bytes are most of a log), LZ4 for the others
	// (states: 0.1 % of a camera log's bytes, read record by record by
	// replay, export and cut, and LZ4 decodes them about three times as
	// fast as zstd, at 2.4x where zstd-1 gets 3.8x).
	Compression []ChannelCompression
	// FlushInterval bounds how long a record may sit in memory before it
	// reaches the file (default 1 s): what kill -9 can cost. With a backlog
	// of frames, small records (states) are not held up behind it (lanes).
	FlushInterval time.Duration
	// DrainTimeout bounds how long, once the recording is over, the writer
	// goes on writing what was received before the end (default
	// DefaultDrainTimeout; negative: no bound). What is still queued then
	// is dropped and counted as recorder drops (Summary.DrainDrops), and
	// the log is finished as usual.
	DrainTimeout time.Duration
	Sync         logfmt.SyncPolicy
	Note         string
	Metadata     map[string]string
	// TimeKeys are zenoh selectors of clock-sync time services, probed
	// every ProbeInterval (default 1 s; negative disables). Default vr/*/time.
	TimeKeys      []string
	ProbeInterval time.Duration
	// ServicePoll is how often new iceoryx2 services are looked for (250 ms).
	ServicePoll time.Duration
	// OnStatus, if set, is called about once a second with a snapshot.
	OnStatus func(Status)
	// OnOpen, if set, is called once the output is open (before the
	// transports are): the recording has somewhere to go.
	OnOpen func()
	// OnProblem, if set, is called once for each channel that cannot be
	// recorded (ChannelStatus.Error) or is recorded with a limit
	// (ChannelStatus.Warning), from the same goroutine as OnStatus.
	OnProblem func(ChannelStatus)
	// QueueBytes bounds, per subscription, the samples received and not yet
	// written (default 512 MiB): an iceoryx2 subscription's frames live in
	// its subscriber's slots from the copy out of shared memory until they
	// are in the file; a zenoh subscription holds half of it in the native
	// queue and half on the way to the log writer. When it is full, new
	// samples are dropped and counted, so memory does not grow with load.
	QueueBytes int
	// IceoryxBuffer is the iceoryx2 subscriber buffer asked for per service
	// (0: as large as each service allows). A service that allows less
	// gets its maximum, with a warning when that is below
	// MinIceoryxBuffer (iceoryx2's default service allows 2).
	IceoryxBuffer int
	// ClockOffset, for tests only, shifts every wall stamp the recorder
	// takes (receive stamps, probes' T1 and T4), as if its host's clock ran
	// that much ahead: a second host's clock on one machine.
	ClockOffset time.Duration
	// Session, if set, is the zenoh session to subscribe and probe with
	// (a process that already has one, e.g. replay --capture); the recorder
	// does not close it. Zenoh left unused then.
	Session *zenoh.Session
	// Feed and OnStart: see feed.go.
	Feed    Feed
	OnStart func()
	// OnZenohSample, if set, is shown every zenoh sample received (not to
	// be kept: its bytes are the recorder's),
	// after its receive stamps were taken and before it is written (replay
	// --lockstep takes its answers from a capture this way, so an answer is
	// stamped before the replay reacts to it).
	OnZenohSample func(s *zenoh.Sample)
	// Schemas declare the payloads of channels vrlog did not define
	// (package schema): the last that matches a channel's name or topic is
	// stored in its meta and gives its records their stamps.
	Schemas schema.Set
	// Snapshot, if set, keeps the recording in memory and writes a log
	// only when triggered (snapshot.Config, Recorder.Snapshot); Output is
	// then the base of the snapshots' names, and splitting does not apply.
	Snapshot *snapshot.Config
	// Triggers are analyze's checks watched live, in snapshot mode: a
	// sample that makes one fail takes a snapshot.
	Triggers []livecheck.Trigger
	// View, if set, sees every channel and every record the recorder
	// receives, written or not (paused, idle): a live viewer (record
	// --view) watches the recording without a subscription of its own.
	View View
	// Mount, if set, is started once the recorder runs, with its zenoh
	// session (opened for it if nothing else needs one): the control
	// plane (recctl), a file server.
	Mount Mount
	// OnNotice, if set, is told what a person should know while the
	// recording goes on (a --snapshot-on check that matches no channel once the
	// channels are known). It must not block.
	OnNotice func(string)
}

// A View is shown the recording as the writer stage accounts for it, on
// its goroutine: a channel before its first record, then each record
// with its stamps. It must not block (a slow viewer drops what it cannot
// send) nor keep the record's memory past the call.
type View interface {
	Channel(c *logfmt.Channel)
	Record(r *logfmt.Record)
}

// DefaultDrainTimeout is Config.DrainTimeout's default: a healthy
// recorder drains in milliseconds, and one that is far behind should not
// outlast a supervisor's stop timeout (docker stop's is 10 s; the footer
// and the last chunks take about a second more), after which a SIGKILL
// would lose the footer and everything not yet sealed.
const DefaultDrainTimeout = 5 * time.Second

// MinIceoryxBuffer is the iceoryx2 subscriber buffer below which the
// recorder warns: a publisher that sends more samples than the buffer holds
// within one poll interval of the recorder overwrites the oldest.
const MinIceoryxBuffer = 8

// metaIoxBuffer is the channel meta key of the iceoryx2 subscriber buffer
// the recorder got (docs/log-format.md).
const metaIoxBuffer = "vrlog.iox2.buffer_size"

// ChannelCompression picks a compression for the channels Pattern (a key
// expression, package keyexpr; "" for every channel) matches.
type ChannelCompression struct {
	Pattern     string
	Compression logfmt.Compression
}

// withDefaults fills in the defaults and checks what the recorder needs.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = time.Second
	}
	if cfg.ProbeInterval == 0 {
		cfg.ProbeInterval = time.Second
	}
	if cfg.ServicePoll == 0 {
		cfg.ServicePoll = 250 * time.Millisecond
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = 512 << 20
	}
	if cfg.DrainTimeout == 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	if len(cfg.TimeKeys) == 0 {
		cfg.TimeKeys = []string{"vr/*/time"}
	}
	switch {
	case len(cfg.ZenohKeys) == 0 && len(cfg.IceoryxServices) == 0 && !cfg.All:
		return cfg, errors.New("recorder: nothing to record: give zenoh keys, iceoryx2 services or All")
	case cfg.Snapshot != nil && cfg.Idle:
		return cfg, errors.New("recorder: a snapshot recorder keeps the last moments from the start: it cannot start idle")
	case cfg.Snapshot == nil && len(cfg.Triggers) > 0:
		return cfg, errors.New("recorder: live triggers take snapshots: they need snapshot mode")
	}
	return cfg, nil
}

// compression is a compiled ChannelCompression.
type compression struct {
	pat   keyexpr.Pattern
	every bool // no pattern
	c     logfmt.Compression
}

func compileCompression(ccs []ChannelCompression) ([]compression, error) {
	var out []compression
	for _, cc := range ccs {
		c := compression{c: cc.Compression, every: cc.Pattern == ""}
		if !c.every {
			p, err := keyexpr.Parse(cc.Pattern)
			if err != nil {
				return nil, fmt.Errorf("recorder: compression %w", err)
			}
			c.pat = p
		}
		out = append(out, c)
	}
	return out, nil
}
