package livecheck

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/keyexpr"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
	"github.com/vrlog/vrlog/schema"
)

// Limit is a threshold for the channels its pattern matches (a key
// expression, package keyexpr, matched against a channel's name and
// topic); a Limit without one applies to every channel its check applies
// to.
type Limit struct {
	Channel string // the pattern as given; "" for every channel
	Value   float64
	pat     keyexpr.Pattern
}

// ParseLimit parses "VALUE" or "CHANNEL=VALUE"; VALUE is a number, or a
// duration ("500ms") when dur is set, stored in milliseconds.
func ParseLimit(s string, dur bool) (Limit, error) {
	var l Limit
	val := s
	if i := strings.LastIndexByte(s, '='); i >= 0 {
		p, err := keyexpr.Parse(s[:i])
		if err != nil {
			return l, err
		}
		l.Channel, l.pat, val = s[:i], p, s[i+1:]
	}
	if dur {
		d, err := time.ParseDuration(val)
		if err != nil || d < 0 {
			return l, fmt.Errorf("%q: want a duration such as 500ms or 2s, or CHANNEL=DURATION", s)
		}
		l.Value = float64(d) / 1e6
		return l, nil
	}
	v, err := strconv.ParseFloat(val, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return l, fmt.Errorf("%q: want a non-negative number, or CHANNEL=NUMBER", s)
	}
	l.Value = v
	return l, nil
}

// Matches reports whether l applies to the channel name and topic.
func (l *Limit) Matches(name, topic string) bool {
	return l.Channel == "" || l.pat.Match(name) || l.pat.Match(topic)
}

// Pick is the last of ls that applies to the channel name and topic.
func Pick(ls []Limit, name, topic string) (Limit, bool) {
	var got Limit
	ok := false
	for i := range ls {
		if ls[i].Matches(name, topic) {
			got, ok = ls[i], true
		}
	}
	return got, ok
}

// Judge compares a check's value on a channel with its limit and says
// so: "max-skips vr/r1/state: 3 (limit ≤ 0): off by 3". analyze's checks
// and record's live triggers word it alike.
func Judge(check, channel, unit string, atMost bool, value, limit float64) (pass bool, msg string) {
	pass, rel := value <= limit, "≤"
	if !atMost {
		pass, rel = value >= limit, "≥"
	}
	u := Spaced(unit)
	msg = fmt.Sprintf("%s %s: %s%s (limit %s %s%s)", check, channel, FmtNum(value), u, rel, FmtNum(limit), u)
	if !pass {
		msg += fmt.Sprintf(": off by %s%s", FmtNum(math.Abs(value-limit)), u)
	}
	return pass, msg
}

// Spaced is a unit as it follows a number in a message: " ms"; "" for a count.
func Spaced(unit string) string {
	if unit == "" {
		return unit
	}
	return " " + unit
}

// FmtNum writes v as short as it reads, to a millionth of its unit (a
// nanosecond of a millisecond): "off by 843.199 ms", not 843.1990000000001.
func FmtNum(v float64) string { return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64) }

// What each check applies to, for messages.
const (
	WhatStamped = "channel with seq stamps"
	WhatData    = "data channel"
	WhatPaired  = "frame channel paired with a state channel"
)

// Channel kinds, by schema.
const (
	KindState = "state"
	KindFrame = "frame"
	KindProbe = "clock-probe"
	KindRaw   = "raw" // schema unknown: transport-level facts only
)

// KindOf is the kind of a channel of schema.
func KindOf(schema string) string {
	switch schema {
	case codec.SchemaState:
		return KindState
	case codec.SchemaFrame:
		return KindFrame
	case codec.SchemaClockProbe:
		return KindProbe
	}
	return KindRaw
}

// Timing is where a channel's timing comes from: its kind, whether its
// records carry stored capture stamps and seqs to use (a built-in schema,
// a declared one, or zenoh timestamps: schema.FromChannel), whether the
// capture stamp is on a clock whose receive − capture is a latency, and,
// for reports, the source of the stamp and of the counter.
type Timing struct {
	Kind      string
	Stamped   bool
	Latency   bool
	StampFrom string // "payload t_ns", "payload header.stamp", "zenoh timestamp", "receive stamp"
	SeqFrom   string // "payload seq", "zenoh source info", "record count", ...
}

// Sources of a stamp or a counter, as reports name them.
const (
	FromZenohTs      = "zenoh timestamp"
	FromReceive      = "receive stamp"
	FromSourceInfo   = "zenoh source info"
	FromCount        = "record count"
	FromRMWTime      = "rmw_zenoh source_timestamp (the publisher's send time)"
	FromRMWSeq       = "rmw_zenoh sequence_number"
	FromRawSeq       = "zenoh source info where the publisher set it, else record count"
	fromPayload      = "payload "
	fromPayloadFrame = "payload (frame header) "
)

// TimingOf is the timing of channel c.
func TimingOf(c *logfmt.Channel) Timing {
	switch k := KindOf(c.Schema); k {
	case KindState:
		return Timing{Kind: k, Stamped: true, Latency: true, StampFrom: fromPayload + "t_ns", SeqFrom: fromPayload + "seq"}
	case KindFrame:
		return Timing{Kind: k, Stamped: true, Latency: true, StampFrom: fromPayloadFrame + "t_ns", SeqFrom: fromPayloadFrame + "seq"}
	case KindProbe:
		return Timing{Kind: k}
	}
	d, ok, err := schema.FromChannel(c)
	if !ok || err != nil {
		return Timing{Kind: KindRaw, StampFrom: FromReceive, SeqFrom: FromRawSeq}
	}
	t := Timing{Kind: KindState, Stamped: true, Latency: d.Epoch != "none"}
	if d.Kind == "frame" {
		t.Kind = KindFrame
	}
	if _, declared := c.Meta[schema.MetaEncoding]; !declared {
		t.Kind = KindRaw // zenoh timestamps on an undeclared channel
	}
	switch d.Stamp {
	case schema.ZenohTimestamp:
		t.StampFrom = FromZenohTs
	case schema.RMWSourceTime:
		t.StampFrom = FromRMWTime
	case schema.Receive, "":
		t.StampFrom, t.Latency = FromReceive, false
	default:
		t.StampFrom = fromPayload + d.Stamp
	}
	switch d.Seq {
	case schema.ZenohSourceSN:
		t.SeqFrom = FromSourceInfo
	case schema.RMWSequenceNumber:
		t.SeqFrom = FromRMWSeq
	case schema.Count, "":
		t.SeqFrom = FromCount
	default:
		t.SeqFrom = fromPayload + d.Seq
	}
	return t
}

// StoredSample is what the timing of a channel sees of r, its count-th
// record, from the stamps the recorder stored: a stamped channel's
// capture stamp and seq (false when r has none: undecodable; no latency
// on a clock of unknown epoch), a raw channel's transport-level facts
// only (the receive stamp, and the zenoh source sequence number when the
// transport gave one). analyze and record's live triggers see samples the
// same way.
func StoredSample(t *Timing, r *logfmt.Record, count uint64) (sampler.Sample, bool) {
	s := sampler.Sample{RecvWallNs: r.RecvWallNs, RecvMonoNs: r.RecvMonoNs}
	if !t.Stamped {
		s.TNs, s.Seq = r.RecvWallNs, count
		if r.HasPubSN {
			s.Seq = r.PublisherSN
		}
		s.RecvWallNs = 0 // no latency without a capture stamp
		return s, true
	}
	s.Seq, s.TNs = r.Seq, r.CaptureNs
	if !t.Latency {
		s.RecvWallNs = 0
	}
	return s, r.HasStamp
}

// CommonPrefix is the length of the common prefix of a and b: a frame
// channel pairs with the state channel sharing the longest one
// (vr/r1/camera/front → vr/r1/state).
func CommonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
