package replay

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/vrlog/vrlog/codec"
	globpkg "github.com/vrlog/vrlog/internal/glob"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/player"
)

// clockKind selects the pacing clock.
type clockKind int

const (
	clockReceive clockKind = iota // recorder's monotonic receive stamps
	clockCapture                  // simulator's capture t_ns
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
	clock      clockKind
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

type head struct {
	it  *logfmt.Iterator
	in  *input
	ok  bool
	key int64 // receive key (common monotonic)
}

// Pass implements player.Source.
func (s *logSource) Pass(ctx context.Context, emit func(*player.Rec) bool) error {
	heads := make([]*head, 0, len(s.inputs))
	for _, in := range s.inputs {
		f := logfmt.Filter{Channels: in.ids}
		if s.clock == clockReceive {
			f.Start = s.start - in.shift
			if s.hasEnd {
				f.End = s.end - in.shift
			}
		}
		h := &head{it: in.r.Records(f), in: in}
		heads = append(heads, h)
		s.advance(h)
	}
	lastOff, haveOff := s.captureOff, false
	var rec player.Rec
	for n := 0; ; n++ {
		var best *head
		for _, h := range heads {
			if h.ok && (best == nil || h.key < best.key) {
				best = h
			}
		}
		if best == nil {
			break
		}
		if n&1023 == 0 && ctx.Err() != nil {
			return nil
		}
		r := best.it.Record()
		rec = player.Rec{Channel: best.in.out[r.Channel], CaptureNs: r.CaptureNs, Seq: r.Seq, HasStamp: r.HasStamp,
			Header: r.Header, Payload: r.Payload, Key: best.key, SourceID: r.PublisherID, SourceSN: r.PublisherSN, HasSourceSN: r.HasPubSN}
		keep := true
		if s.clock == clockCapture {
			if r.HasStamp {
				rec.Key = r.CaptureNs
				lastOff, haveOff = r.CaptureNs-best.key, true
			} else {
				rec.Key = best.key + lastOff
			}
			_ = haveOff
			keep = rec.Key >= s.start && (!s.hasEnd || rec.Key < s.end)
		}
		if keep && !emit(&rec) {
			return nil
		}
		s.advance(best)
	}
	for _, h := range heads {
		if err := h.it.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (s *logSource) advance(h *head) {
	h.ok = h.it.Next()
	if h.ok {
		h.key = h.it.Record().RecvMonoNs + h.in.shift
	}
}

// glob compiles a channel pattern (see package glob).
func glob(p string) (*regexp.Regexp, error) { return globpkg.Compile(p), nil }

// remap rewrites a topic: FROM=TO exact, or FROM ending in /** replacing
// that prefix; then the prefix.
type remapper struct {
	rules  [][2]string
	prefix string
}

func newRemapper(specs []string, prefix string) (*remapper, error) {
	m := &remapper{prefix: prefix}
	for _, s := range specs {
		from, to, ok := strings.Cut(s, "=")
		if !ok || from == "" || to == "" {
			return nil, fmt.Errorf("--remap %q: want FROM=TO", s)
		}
		m.rules = append(m.rules, [2]string{from, to})
	}
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		m.prefix += "/"
	}
	return m, nil
}

func (m *remapper) apply(name, topic string) string {
	out := topic
	for _, r := range m.rules {
		from, to := r[0], r[1]
		if from == topic || from == name {
			out = to
			break
		}
		if p, ok := strings.CutSuffix(from, "/**"); ok {
			if rest, ok := strings.CutPrefix(topic, p+"/"); ok {
				out = strings.TrimSuffix(to, "/**") + "/" + rest
				break
			}
		}
	}
	return m.prefix + out
}

// isFrame tells frame streams (for --inject lag).
func isFrame(c logfmt.Channel) bool {
	return c.Schema == codec.SchemaFrame || (c.Schema == "" && c.Transport == logfmt.TransportIceoryx2)
}
