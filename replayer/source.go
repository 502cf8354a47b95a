package replayer

import (
	"context"
	"runtime"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/player"
)

// output is one replayed stream: a transport and a name to publish on.
type output struct {
	Name      string // channel name in the log
	Transport logfmt.Transport
	Topic     string // zenoh key or iceoryx2 service, after remap/prefix
	Schema    string
	Meta      map[string]string
	MaxRecord int // average record size from the index (iceoryx2 sizing)
	Frame     bool
}

// input is one opened log.
type input struct {
	path  string
	r     *logfmt.Reader
	shift int64          // added to RecvMonoNs: this file's monotonic → file 0's
	out   map[uint16]int // channel id → output index
	ids   []uint16
}

// logSource merges the inputs by receive time and yields the window's
// records, keyed on the chosen clock. It implements player.Source.
type logSource struct {
	inputs     []*input
	clock      Clock
	start, end int64 // window in key units; end exclusive
	hasEnd     bool
	captureOff int64 // capture - receive key, for unstamped records (capture clock)
}

// wallMinusMono is a file's CLOCK_REALTIME - CLOCK_MONOTONIC at its start.
func wallMinusMono(r *logfmt.Reader) int64 {
	for _, c := range r.Chunks() {
		return c.MinWallNs - c.MinMonoNs
	}
	return 0
}

// Pass implements player.Source: the inputs merged by receive time on
// file 0's monotonic clock (logfmt.Merge), keyed on the chosen clock.
func (s *logSource) Pass(ctx context.Context, emit func(*player.Rec) bool) error {
	return s.pass(ctx, s.start, emit)
}

// PassFrom implements player.Seeker: Pass from log time from.
func (s *logSource) PassFrom(ctx context.Context, from int64, emit func(*player.Rec) bool) error {
	return s.pass(ctx, max(from, s.start), emit)
}

func (s *logSource) pass(ctx context.Context, start int64, emit func(*player.Rec) bool) error {
	its := make([]*logfmt.Iterator, len(s.inputs))
	for i, in := range s.inputs {
		// One loader on a spare core reads and decompresses the next
		// chunk (zstd: most of a payload read), so the player's reader
		// goroutine only decodes record metadata and copies: fast
		// replays (--rate) are bound by it less. One is enough to keep
		// ahead of the log's time; the other cores stay with the
		// publishing goroutine and what the replay drives.
		f := logfmt.Filter{Channels: in.ids, Workers: min(runtime.GOMAXPROCS(0)-1, 1)}
		if s.clock == ClockReceive {
			f.Start = start - in.shift
			if s.hasEnd {
				f.End = s.end - in.shift
			}
		}
		its[i] = in.r.Records(f)
		defer its[i].Close() // stops the read-ahead when ctx or emit ends the pass early
	}
	m := logfmt.Merge(its, func(i int, r *logfmt.Record) int64 { return r.RecvMonoNs + s.inputs[i].shift })
	lastOff := s.captureOff
	var rec player.Rec
	for n := 0; m.Next(); n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return nil
		}
		r, key := m.Record(), m.Key()
		rec = player.Rec{Channel: s.inputs[m.Input()].out[r.Channel], CaptureNs: r.CaptureNs, Seq: r.Seq, HasStamp: r.HasStamp,
			Header: r.Header, Payload: r.Payload, Key: key, SourceID: r.PublisherID, SourceSN: r.PublisherSN, HasSourceSN: r.HasPubSN}
		if s.clock == ClockCapture {
			if r.HasStamp {
				rec.Key, lastOff = r.CaptureNs, r.CaptureNs-key
			} else {
				rec.Key = key + lastOff // unstamped: the capture offset of the last stamped record
			}
			if rec.Key < start || (s.hasEnd && rec.Key >= s.end) {
				continue
			}
		}
		if !emit(&rec) {
			return nil
		}
	}
	return m.Err()
}

// publishedTopic is where channel c is published: the first remap whose
// FROM matches its name or topic (else its topic), then the prefix; used
// marks the remaps that matched.
func publishedTopic(cfg *Config, used []bool, c logfmt.Channel) string {
	out := c.Topic
	for i, m := range cfg.Remaps {
		if to, ok := m.Apply(c.Topic, c.Name); ok {
			out, used[i] = to, true
			break
		}
	}
	return cfg.Prefix + out
}

// isFrame tells frame streams (for --inject lag).
func isFrame(c logfmt.Channel) bool {
	return c.Schema == codec.SchemaFrame || (c.Schema == "" && c.Transport == logfmt.TransportIceoryx2)
}

// countTriggers counts the records of the trigger outputs one pass of the
// window holds (after a run that did not finish: what it should have
// released), damage included: the inputs are read again, tolerantly, by
// readers of their own (the replay's own readers keep their findings),
// and a chunk they cannot read counts by its index.
func (s *session) countTriggers(trigger []bool) uint64 {
	src := *s.src
	src.inputs = nil
	for _, in := range s.inputs {
		r, err := logfmt.Open(in.path, logfmt.ReaderOptions{Tolerant: true})
		if err != nil {
			return 0
		}
		defer r.Close()
		c := *in
		c.r = r
		src.inputs = append(src.inputs, &c)
	}
	var n uint64
	src.pass(context.Background(), src.start, func(r *player.Rec) bool {
		if trigger[r.Channel] {
			n++
		}
		return true
	})
	for _, in := range src.inputs {
		for _, ce := range in.r.SkippedChunks() {
			n += src.damagedTriggers(in, ce.Offset, trigger)
		}
	}
	return n
}

// damagedTriggers is what the index says the damaged chunk holding offset
// off of input in holds of the trigger outputs, when the chunk is in the
// window (by its receive times; a capture-clock window takes it whole).
func (s *logSource) damagedTriggers(in *input, off int64, trigger []bool) uint64 {
	for _, ci := range in.r.Chunks() {
		if off < ci.Offset || off >= ci.Offset+ci.Size() {
			continue
		}
		if s.clock == ClockReceive && (ci.MaxMonoNs+in.shift < s.start || (s.hasEnd && ci.MinMonoNs+in.shift >= s.end)) {
			return 0
		}
		var n uint64
		for _, cc := range ci.Channels {
			if o, ok := in.out[cc.Channel]; ok && trigger[o] {
				n += uint64(cc.Records)
			}
		}
		return n
	}
	return 0
}
